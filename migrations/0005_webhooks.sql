-- Signed webhooks (Standard Webhooks). An event is written to the outbox in the transaction of
-- the change that causes it, fanned out at once to one delivery per subscribed, enabled
-- endpoint; any server process delivers (claims with FOR UPDATE SKIP LOCKED).

CREATE TABLE webhook_endpoints (
  org_id           text NOT NULL REFERENCES organizations (id),
  id               text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  url              text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  -- whsec_ + base64 of random bytes. Kept recoverable: the worker signs with it.
  secret           text NOT NULL,
  -- NULL: every event type.
  event_types      text[],
  enabled          boolean NOT NULL DEFAULT true,
  disabled_reason  text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  disabled_at      timestamptz,
  PRIMARY KEY (org_id, id)
);
-- Operator commands name an endpoint by its id alone.
CREATE UNIQUE INDEX webhook_endpoints_by_id ON webhook_endpoints (id);

-- One row per event (the Standard Webhooks message): its id is the webhook-id of every attempt,
-- and payload is the exact body signed and sent, so every attempt sends the same bytes.
CREATE TABLE webhook_events (
  org_id      text NOT NULL REFERENCES organizations (id),
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  type        text NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  payload     text NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, id)
);

CREATE TABLE webhook_deliveries (
  org_id            text NOT NULL,
  id                text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  event_id          text NOT NULL,
  endpoint_id       text NOT NULL,
  status            text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts          integer NOT NULL DEFAULT 0,
  -- pending: when the next attempt is due; while an attempt runs, the end of its lease.
  next_attempt_at   timestamptz,
  last_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  created_at        timestamptz NOT NULL,
  completed_at      timestamptz,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, event_id) REFERENCES webhook_events (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, endpoint_id) REFERENCES webhook_endpoints (org_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX webhook_deliveries_by_id ON webhook_deliveries (id);
-- The worker's claim and the oldest-pending metric read only pending rows.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_pending_age ON webhook_deliveries (created_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (org_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (org_id, created_at DESC, id DESC) WHERE status = 'failed';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (org_id, endpoint_id) WHERE status = 'pending';
