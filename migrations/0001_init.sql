-- Climate Pulse schema. Every organization-owned table is keyed by org_id first, so the
-- schema can be distributed by organization (Citus) without changing a query.

CREATE TABLE plans (
  name                   text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  rest_api               boolean NOT NULL,
  rate_limit_per_minute  integer NOT NULL CHECK (rate_limit_per_minute > 0)
);

INSERT INTO plans (name, rest_api, rate_limit_per_minute) VALUES
  ('free', false, 60),
  ('business', true, 600),
  ('enterprise', true, 6000);

CREATE TABLE organizations (
  id            text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 256),
  plan          text NOT NULL REFERENCES plans (name),
  member_count  integer NOT NULL DEFAULT 0 CHECK (member_count >= 0),
  created_at    timestamptz NOT NULL,
  deleted_at    timestamptz
);

CREATE TABLE api_keys (
  org_id        text NOT NULL REFERENCES organizations (id),
  id            text NOT NULL,
  key_hash      bytea NOT NULL,
  prefix        text NOT NULL,
  name          text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  PRIMARY KEY (org_id, id)
);
-- Authentication looks a key up by its hash before it knows the organization.
CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (key_hash);
CREATE INDEX api_keys_by_prefix ON api_keys (prefix);

CREATE TABLE teams (
  org_id      text NOT NULL REFERENCES organizations (id),
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX teams_unique_name ON teams (org_id, lower(btrim(name)));

CREATE TABLE pulses (
  org_id             text NOT NULL REFERENCES organizations (id),
  id                 text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  level              smallint NOT NULL CHECK (level BETWEEN 1 AND 5),
  reason             text CHECK (length(reason) <= 500),
  comment            text,
  moderation_status  text NOT NULL CHECK (moderation_status IN ('CLEAN', 'FLAGGED')),
  subteam_id         text,
  created_at         timestamptz NOT NULL,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, subteam_id) REFERENCES teams (org_id, id)
);
-- Keyset pagination, newest first: (created_at, id) descending, with and without filters.
CREATE INDEX pulses_page ON pulses (org_id, created_at DESC, id DESC);
CREATE INDEX pulses_page_by_team ON pulses (org_id, subteam_id, created_at DESC, id DESC);
CREATE INDEX pulses_page_by_level ON pulses (org_id, level, created_at DESC, id DESC);
-- Only publishable comments are ever read through the API.
CREATE INDEX pulses_clean_comments ON pulses (org_id, created_at DESC, id DESC)
  WHERE moderation_status = 'CLEAN' AND comment <> '';

-- Rollups kept exact in the same transaction as every pulse write, so statistics never
-- scan pulses: their cost does not grow with an organization's history.
CREATE TABLE pulse_totals (
  org_id       text PRIMARY KEY REFERENCES organizations (id),
  pulse_count  bigint NOT NULL,
  level_sum    bigint NOT NULL
);

CREATE TABLE pulse_day_stats (
  org_id       text NOT NULL REFERENCES organizations (id),
  day          date NOT NULL,
  pulse_count  integer NOT NULL,
  level_sum    bigint NOT NULL,
  PRIMARY KEY (org_id, day)
);

CREATE TABLE pulse_team_day_stats (
  org_id       text NOT NULL REFERENCES organizations (id),
  subteam_id   text NOT NULL,
  day          date NOT NULL,
  pulse_count  integer NOT NULL,
  level_sum    bigint NOT NULL,
  PRIMARY KEY (org_id, subteam_id, day)
);

CREATE TABLE alerts (
  org_id       text NOT NULL REFERENCES organizations (id),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  type         text NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  message      text NOT NULL CHECK (length(message) <= 4000),
  week_iso     text CHECK (length(week_iso) <= 20),
  subteam_id   text,
  read_at      timestamptz,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, subteam_id) REFERENCES teams (org_id, id)
);
CREATE INDEX alerts_recent ON alerts (org_id, created_at DESC, id DESC);

CREATE TABLE actions (
  org_id       text NOT NULL REFERENCES organizations (id),
  id           text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
  title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 120),
  description  text CHECK (length(description) <= 500),
  start_date   timestamptz NOT NULL,
  end_date     timestamptz,
  status       text NOT NULL CHECK (status IN ('active', 'done', 'cancelled')),
  subteam_id   text,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, subteam_id) REFERENCES teams (org_id, id)
);
CREATE INDEX actions_recent ON actions (org_id, created_at DESC, id DESC);

-- Durable idempotency: written in the same transaction as the resource it created.
CREATE TABLE idempotency_records (
  org_id           text NOT NULL REFERENCES organizations (id),
  api_key_id       text NOT NULL,
  idempotency_key  text NOT NULL,
  method           text NOT NULL,
  path             text NOT NULL,
  body_sha256      text NOT NULL,
  status_code      integer NOT NULL,
  response_body    text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, api_key_id, idempotency_key)
);
CREATE INDEX idempotency_records_age ON idempotency_records (created_at);

-- Service-wide secrets (not organization data), generated on first start when not configured.
CREATE TABLE service_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
