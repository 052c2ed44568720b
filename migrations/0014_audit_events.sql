-- Issue 31, item 4 (CONTRACT.md sections 10 and 11): the audit log of an organization. Every
-- domain operation that changes an organization's data writes one row here, in the transaction of
-- the change, naming who made it (a console member, the operator, or an API key), so the console,
-- the operator API and the public API read one log. Organization data like any other: keyed by
-- org_id first and distributed by it under Citus (src/db/citus.ts); erasing the organization removes
-- its rows (src/db/repositories/orgs.ts finds every table with org_id), a soft delete keeps them.
--
-- Never a secret, key, hash, password, token or comment text in any column (src/domain/audit.ts):
-- actor_label is a member's email, a key's display prefix or 'operator'; details holds small facts
-- (a key's name and scope, the names and new values of an organization's changed fields, counts).
CREATE TABLE audit_events (
  org_id       text NOT NULL REFERENCES organizations (id),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  created_at   timestamptz NOT NULL,
  actor_kind   text NOT NULL CHECK (actor_kind IN ('member', 'operator', 'key')),
  -- The member's or the key's id; none for the operator.
  actor_id     text CHECK (length(actor_id) BETWEEN 1 AND 128),
  actor_label  text NOT NULL CHECK (length(actor_label) BETWEEN 1 AND 320),
  action       text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$' AND length(action) <= 64),
  target_kind  text NOT NULL CHECK (length(target_kind) BETWEEN 1 AND 64),
  target_id    text CHECK (length(target_id) BETWEEN 1 AND 128),
  -- The client's address (TRUST_PROXY decides which); none over the operator's Unix socket.
  address      text CHECK (length(address) <= 64),
  details      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
  PRIMARY KEY (org_id, id),
  CHECK ((actor_kind = 'operator') = (actor_id IS NULL))
);
-- Pages newest first, per organization: (created_at, id) descending, as pulses and alerts.
CREATE INDEX audit_events_recent ON audit_events (org_id, created_at DESC, id DESC);
