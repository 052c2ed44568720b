-- Every pulse write goes through one door, src/db/pulse-writes.ts, which folds the inserted rows
-- into the rollups and the CLEAN week counts with set-based SQL in the same statement (one per
-- batch). The statement triggers of migrations 0002 and 0003 read transition tables, which a
-- Citus worker does not have ("could not find named tuplestore new_pulses"): they go, and the
-- door does their work on every engine.
DROP TRIGGER pulses_fold_into_rollups ON pulses;
DROP FUNCTION pulses_fold_into_rollups();
DROP TRIGGER pulses_fold_into_clean_weeks ON pulses;
DROP FUNCTION pulses_fold_into_clean_weeks();

-- The two foreign keys of pulses were checked row by row, two checks per pulse: the largest
-- share of an import's time (docs/decisions.md). The same references are now held by the
-- rollups the door writes in the same statement, checked once per rollup row instead of once
-- per pulse: every pulse is counted in its organization's pulse_totals row (which already
-- refers to organizations), and every pulse with a team in a pulse_team_day_stats row, which
-- now refers to teams. Rollup rows are never deleted (pulses are append-only), so a team or an
-- organization with pulses can no more be deleted or re-keyed than before, and a pulse naming
-- a missing team fails its statement with 23503, as before.
ALTER TABLE pulses DROP CONSTRAINT pulses_org_id_fkey;
ALTER TABLE pulses DROP CONSTRAINT pulses_org_id_subteam_id_fkey;
ALTER TABLE pulse_team_day_stats ADD FOREIGN KEY (org_id, subteam_id) REFERENCES teams (org_id, id);
