-- Issue 17: anonymity that survives moderation, late pulses and a second organization
-- (CONTRACT.md section 5, docs/privacy.md).
--
-- * Moderation is a domain operation (src/domain/moderation.ts), not a row trigger: the trigger
--   of 0003 locked the organization and read other tables, which a distributed schema cannot run.
-- * A released comment whose pulse stops being CLEAN leaves alone; its cell stays released.
-- * Every pulse of a week is recorded when the week is frozen, with the status it had then, so
--   that GET /pulses can show that status and pulses that arrive later form late pools.
-- * Late pools are derived, never written at insert time: per (week, group), the CLEAN count of
--   pulse_clean_week_stats minus the frozen pulses of the group that are CLEAN now.

DROP TRIGGER pulses_moderation_changed ON pulses;
DROP FUNCTION pulses_moderation_changed();

-- The moderationStatus GET /pulses shows for a pulse of a released week, kept only while it
-- differs from moderation_status (written by the moderation operation alone). NULL: the
-- current status is the one shown. The listing reads it from the row it reads anyway.
ALTER TABLE pulses ADD COLUMN status_at_release text CHECK (status_at_release IN ('CLEAN', 'FLAGGED'));

-- Cells now come in batches: 0 is the week's release, 1, 2, ... each release of late pools.
-- order_key names the key that ordered the batch (NULL: released before this migration, by
-- HMAC of the pulse id alone). Withdrawal is gone.
ALTER TABLE comment_cells ADD COLUMN batch integer NOT NULL DEFAULT 0;
ALTER TABLE comment_cells ADD COLUMN order_key bytea;
ALTER TABLE comment_cells DROP CONSTRAINT comment_cells_pkey;
ALTER TABLE comment_cells ADD PRIMARY KEY (org_id, week, cell, batch);
-- Comments of cells withdrawn by the old rule come back, except those of pulses not CLEAN now.
ALTER TABLE comment_cells DROP COLUMN left_clean;
ALTER TABLE comment_cells DROP COLUMN withdrawn;

-- Every pulse of a frozen week: released members (CLEAN at the release: cell, rank, comment) and
-- pulses that were FLAGGED then (cell, rank and comment NULL: never released for the week).
-- visible = released AND the pulse is CLEAN now, kept by the moderation operation.
ALTER TABLE comment_release_members ADD COLUMN batch integer NOT NULL DEFAULT 0;
ALTER TABLE comment_release_members ADD COLUMN frozen_status text NOT NULL DEFAULT 'CLEAN' CHECK (frozen_status IN ('CLEAN', 'FLAGGED'));
ALTER TABLE comment_release_members ADD COLUMN released boolean NOT NULL DEFAULT false;
ALTER TABLE comment_release_members ALTER COLUMN cell DROP NOT NULL;
ALTER TABLE comment_release_members ALTER COLUMN rank DROP NOT NULL;

UPDATE comment_release_members m SET released = c.released
  FROM comment_cells c
 WHERE c.org_id = m.org_id AND c.week = m.week AND c.cell = m.cell AND c.batch = 0;
UPDATE comment_release_members m SET visible = m.released AND p.moderation_status = 'CLEAN'
  FROM pulses p
 WHERE p.org_id = m.org_id AND p.id = m.pulse_id;

-- Pulses of weeks frozen under the old rule that are not members (FLAGGED at the release, or
-- arrived later): recorded as frozen with their status now, so none of them is ever released
-- for its week (the old rule's promise) and their moderation does not move a late pool.
INSERT INTO comment_release_members (org_id, pulse_id, week, grp, batch, frozen_status, cell, rank, comment, released, visible)
SELECT p.org_id, p.id, w.week, coalesce('team:' || p.subteam_id, 'none'), 0, p.moderation_status, NULL, NULL, NULL, false, false
  FROM (SELECT DISTINCT org_id, week FROM comment_cells) w
  JOIN pulses p ON p.org_id = w.org_id
   AND p.created_at >= w.week::timestamp AT TIME ZONE 'UTC'
   AND p.created_at < (w.week + 7)::timestamp AT TIME ZONE 'UTC'
 WHERE NOT EXISTS (SELECT 1 FROM comment_release_members m WHERE m.org_id = p.org_id AND m.pulse_id = p.id);

-- Members that stopped being CLEAN since: GET /pulses shows them as they were at the release.
UPDATE pulses p SET status_at_release = 'CLEAN'
  FROM comment_release_members m
 WHERE m.org_id = p.org_id AND m.pulse_id = p.id AND m.frozen_status = 'CLEAN' AND p.moderation_status <> 'CLEAN';

-- Per (week, group) of a frozen week: how many of its frozen pulses are CLEAN now. A week is
-- frozen when it has rows here. The late pool of a group is pulse_clean_week_stats.clean_count
-- minus frozen_clean: the CLEAN pulses that no release has recorded.
CREATE TABLE comment_frozen_groups (
  org_id        text NOT NULL REFERENCES organizations (id),
  week          date NOT NULL,
  grp           text NOT NULL,
  frozen_clean  integer NOT NULL,
  PRIMARY KEY (org_id, week, grp)
);

INSERT INTO comment_frozen_groups (org_id, week, grp, frozen_clean)
SELECT m.org_id, m.week, m.grp, count(*) FILTER (WHERE p.moderation_status = 'CLEAN')::int
  FROM comment_release_members m JOIN pulses p ON p.org_id = m.org_id AND p.id = m.pulse_id
 GROUP BY 1, 2, 3;

-- Spans recorded every covered week, also weeks without a pulse, which froze history for good.
DROP TABLE comment_release_spans;
