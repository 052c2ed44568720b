-- Issue 51: check-ins that name no one (CONTRACT.md section 12, amendments of turn 6).
--
-- A round is fixed at its start: who is on it and in which team's key they answer (its slots and
-- members), its reasons and flag words. Its links name no one: (digest of the token, week, key
-- slot, state), made in one statement in random order. What ties a person to a link is the mail,
-- and until the relay accepts it the round's outbox, which erases the row then. Opening, issuance
-- and answer touch only unnamed rows: the links and each slot's counters.

-- When a respondent joined their current team (or the roster): the page says how many of a team
-- joined it in the four weeks before the round.
ALTER TABLE respondents ADD COLUMN team_since timestamptz;
UPDATE respondents SET team_since = created_at;
ALTER TABLE respondents ALTER COLUMN team_since SET NOT NULL;

-- The round's words, as they stood at its start: a change made during the week applies from the
-- next round. started_at is the start of the round (the job's run), never a respondent's time.
ALTER TABLE checkin_rounds ADD COLUMN started_at timestamptz;
ALTER TABLE checkin_rounds ADD COLUMN reasons text[] NOT NULL DEFAULT '{}';
ALTER TABLE checkin_rounds ADD COLUMN flag_words text[] NOT NULL DEFAULT '{}';
UPDATE checkin_rounds r SET started_at = r.week::timestamptz, reasons = s.reasons, flag_words = s.flag_words
  FROM checkin_settings s WHERE s.org_id = r.org_id;
UPDATE checkin_rounds SET started_at = week::timestamptz WHERE started_at IS NULL;
ALTER TABLE checkin_rounds ALTER COLUMN started_at SET NOT NULL;

-- One row per key of the round ('' is the organization's key). respondents: the people of this
-- week's roster who answer under it by default; recent_joiners: of them, those who joined their team
-- in the four weeks before the round. capacity: the answers the key accepts at most (a team's key:
-- its people; the organization's key: everyone of the round, since anyone may leave their team
-- out). answered: the answers it took, the participation count.
CREATE TABLE checkin_round_slots (
  org_id          text NOT NULL REFERENCES organizations (id),
  week            date NOT NULL,
  team_slot       text NOT NULL,
  respondents     integer NOT NULL CHECK (respondents >= 0),
  recent_joiners  integer NOT NULL CHECK (recent_joiners >= 0),
  capacity        integer NOT NULL CHECK (capacity >= 0),
  answered        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, week, team_slot),
  FOREIGN KEY (org_id, week) REFERENCES checkin_rounds (org_id, week),
  CHECK (answered BETWEEN 0 AND capacity)
);

-- Who is on the round and under which key they answer: the roster of the week, written once at its
-- start (for the reminder and a re-sent link). It says nothing of links, openings or answers.
CREATE TABLE checkin_round_members (
  org_id         text NOT NULL REFERENCES organizations (id),
  week           date NOT NULL,
  respondent_id  text NOT NULL,
  team_slot      text NOT NULL,
  PRIMARY KEY (org_id, week, respondent_id),
  FOREIGN KEY (org_id, week) REFERENCES checkin_rounds (org_id, week),
  FOREIGN KEY (org_id, respondent_id) REFERENCES respondents (org_id, id) ON DELETE CASCADE
);

-- The links: no respondent. state: 0 made, 1 opened, 2 token issued (once).
CREATE TABLE checkin_round_links (
  org_id      text NOT NULL REFERENCES organizations (id),
  token_hash  bytea NOT NULL,
  week        date NOT NULL,
  team_slot   text NOT NULL,
  state       smallint NOT NULL DEFAULT 0 CHECK (state BETWEEN 0 AND 2),
  PRIMARY KEY (org_id, token_hash),
  FOREIGN KEY (org_id, week) REFERENCES checkin_rounds (org_id, week)
);
CREATE INDEX checkin_round_links_by_week ON checkin_round_links (org_id, week, team_slot);

-- Mails of the round waiting for the relay: the only rows that tie a person to a link, erased once
-- the relay accepts the mail. The link's token is sealed (AES-256-GCM) under a key that lives only
-- in the memory of the process that made it (sealed_by names that key, at random): no file, WAL
-- record or backup ever holds it readable, even after the row is erased. A row whose process died
-- is given a new link by another once sealed_until has passed (the sealing process renews it each
-- time it tries the mail). A reminder carries no link (no token): it goes to everyone of the round.
-- lease_until holds a row for one process while its mail is sent.
CREATE TABLE checkin_outbox (
  org_id         text NOT NULL REFERENCES organizations (id),
  id             text NOT NULL,
  week           date NOT NULL,
  respondent_id  text NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('first', 'reminder', 'resent')),
  token_sealed   text,
  sealed_by      text,
  sealed_until   timestamptz,
  due_at         timestamptz NOT NULL,
  lease_until    timestamptz,
  PRIMARY KEY (org_id, id),
  FOREIGN KEY (org_id, week) REFERENCES checkin_rounds (org_id, week),
  FOREIGN KEY (org_id, respondent_id) REFERENCES respondents (org_id, id) ON DELETE CASCADE,
  CHECK ((kind = 'reminder') = (token_sealed IS NULL) AND (token_sealed IS NULL) = (sealed_by IS NULL) AND (sealed_by IS NULL) = (sealed_until IS NULL))
);
CREATE INDEX checkin_outbox_due ON checkin_outbox (org_id, week, kind, due_at);

-- Rounds already under way keep working: their links become unnamed rows in random order (a first
-- and a reminder link each), their counts slots. Mails not yet sent are not made again: the
-- console's re-send gives such a person a link.
INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity)
SELECT l.org_id, l.week, l.team_slot, count(*)::int, 0,
       CASE WHEN l.team_slot = '' THEN (SELECT count(*) FROM checkin_links a WHERE a.org_id = l.org_id AND a.week = l.week)::int ELSE count(*)::int END
  FROM checkin_links l GROUP BY l.org_id, l.week, l.team_slot;
INSERT INTO checkin_round_slots (org_id, week, team_slot, respondents, recent_joiners, capacity)
SELECT r.org_id, r.week, '', 0, 0, (SELECT count(*) FROM checkin_links a WHERE a.org_id = r.org_id AND a.week = r.week)::int
  FROM checkin_rounds r
 WHERE NOT EXISTS (SELECT 1 FROM checkin_round_slots s WHERE s.org_id = r.org_id AND s.week = r.week AND s.team_slot = '');
UPDATE checkin_round_slots s SET answered = least(s.capacity, (
  SELECT count(*) FROM checkin_spent p JOIN checkin_keys k ON k.org_id = p.org_id AND k.id = p.key_id
   WHERE p.org_id = s.org_id AND k.week = s.week AND k.team_slot = s.team_slot)::int);
INSERT INTO checkin_round_members (org_id, week, respondent_id, team_slot)
SELECT org_id, week, respondent_id, team_slot FROM checkin_links;
INSERT INTO checkin_round_links (org_id, token_hash, week, team_slot, state)
SELECT org_id, h, week, team_slot, st FROM (
  SELECT org_id, token_hash AS h, week, team_slot, CASE WHEN issued THEN 2 WHEN opened THEN 1 ELSE 0 END AS st FROM checkin_links WHERE token_hash IS NOT NULL
  UNION ALL
  SELECT org_id, reminder_hash, week, team_slot, CASE WHEN issued THEN 2 WHEN opened THEN 1 ELSE 0 END FROM checkin_links WHERE reminder_hash IS NOT NULL
) u ORDER BY random();
DROP TABLE checkin_links;
