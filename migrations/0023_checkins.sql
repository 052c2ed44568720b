-- Issue 45: weekly check-ins, anonymous by RFC 9474 blind signatures (CONTRACT.md section 12).
--
-- What is kept of a respondent is the roster (email, team) and, per ISO week, whether their link
-- was mailed, opened and used to obtain a token: flags, never a time finer than the week, never
-- the blinded or final message. What is kept of an answer is the pulse (through the pulse door)
-- and the SHA-256 of its token's message, to spend it once: nothing joins the two.

-- The roster. Respondents are not members: no password, no session.
CREATE TABLE respondents (
  org_id      text NOT NULL REFERENCES organizations (id),
  id          text NOT NULL,
  email       text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  -- NULL: no team.
  team_id     text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, team_id) REFERENCES teams (org_id, id)
);
CREATE UNIQUE INDEX respondents_by_email ON respondents (org_id, lower(email));
CREATE INDEX respondents_by_team ON respondents (org_id, team_id);

-- The organization's round: ISO weekday (1 Monday .. 7 Sunday) and hour in its time zone; the
-- reminder's weekday (NULL: none); the reasons offered on the page and the words that make an
-- answer arrive FLAGGED. No row: Monday 09:00 UTC, reminder on Thursday, no reasons, no words.
CREATE TABLE checkin_settings (
  org_id            text PRIMARY KEY REFERENCES organizations (id),
  weekday           smallint NOT NULL DEFAULT 1 CHECK (weekday BETWEEN 1 AND 7),
  hour              smallint NOT NULL DEFAULT 9 CHECK (hour BETWEEN 0 AND 23),
  time_zone         text NOT NULL DEFAULT 'UTC' CHECK (length(time_zone) BETWEEN 1 AND 64),
  reminder_weekday  smallint DEFAULT 4 CHECK (reminder_weekday BETWEEN 1 AND 7),
  reasons           text[] NOT NULL DEFAULT '{}',
  flag_words        text[] NOT NULL DEFAULT '{}',
  updated_at        timestamptz NOT NULL
);

-- One RSA key per (organization, team or none, ISO week): the public half published at
-- GET /checkin/keys/{orgId}, the private half sealed (AES-256-GCM under a service secret).
-- team_slot is the team's id, or '' for the organization's key (teams of fewer than 5).
CREATE TABLE checkin_keys (
  org_id          text NOT NULL REFERENCES organizations (id),
  id              text NOT NULL,
  week            date NOT NULL,
  team_slot       text NOT NULL,
  public_spki     bytea NOT NULL,
  private_sealed  bytea NOT NULL,
  PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX checkin_keys_by_week_team ON checkin_keys (org_id, week, team_slot);

-- A round per organization and week: made once (its primary key decides among processes).
CREATE TABLE checkin_rounds (
  org_id  text NOT NULL REFERENCES organizations (id),
  week    date NOT NULL,
  PRIMARY KEY (org_id, week)
);

-- A respondent's link of a week. Only SHA-256 digests of the link's tokens are kept: the first
-- mail's (or the CSV file's) and the reminder's. The flags are what the participation counts
-- read; team_slot is the team the respondent was invited in. lease_until holds a mail being sent
-- by one process (NULL once mailed): N processes send each mail once.
CREATE TABLE checkin_links (
  org_id          text NOT NULL REFERENCES organizations (id),
  respondent_id   text NOT NULL,
  week            date NOT NULL,
  team_slot       text NOT NULL,
  token_hash      bytea,
  reminder_hash   bytea,
  mailed          boolean NOT NULL DEFAULT false,
  reminded        boolean NOT NULL DEFAULT false,
  opened          boolean NOT NULL DEFAULT false,
  issued          boolean NOT NULL DEFAULT false,
  lease_until     timestamptz,
  PRIMARY KEY (org_id, respondent_id, week),
  FOREIGN KEY (org_id, respondent_id) REFERENCES respondents (org_id, id) ON DELETE CASCADE,
  FOREIGN KEY (org_id, week) REFERENCES checkin_rounds (org_id, week)
);
CREATE UNIQUE INDEX checkin_links_by_token ON checkin_links (org_id, token_hash);
CREATE UNIQUE INDEX checkin_links_by_reminder ON checkin_links (org_id, reminder_hash);

-- Spent tokens: the SHA-256 of the token's message under the key it was signed with. A second
-- answer with the same token meets the primary key (409). No time, no respondent, no pulse id.
CREATE TABLE checkin_spent (
  org_id      text NOT NULL REFERENCES organizations (id),
  key_id      text NOT NULL,
  token_hash  bytea NOT NULL,
  PRIMARY KEY (org_id, token_hash),
  FOREIGN KEY (org_id, key_id) REFERENCES checkin_keys (org_id, id)
);
CREATE INDEX checkin_spent_by_key ON checkin_spent (org_id, key_id);
