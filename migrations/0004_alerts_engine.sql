-- The alert engine (issue 11) raises each alert at most once per (organization, group, ISO
-- week, type), however often and on however many processes it runs: the unique index is the
-- guarantee, and the engine inserts with ON CONFLICT DO NOTHING.
-- group_key: 'team:<team id>', 'no_team' (pulses without a team) or 'org' (the whole
-- organization). Alerts loaded from a dataset file have none; NULLs never conflict.

ALTER TABLE alerts ADD COLUMN group_key text
  CHECK (group_key IS NULL OR group_key IN ('org', 'no_team') OR group_key LIKE 'team:%');

CREATE UNIQUE INDEX alerts_raised_once ON alerts (org_id, week_iso, group_key, type);
