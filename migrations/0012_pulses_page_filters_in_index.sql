-- Issue 19: the import's database time was mostly the insert into pulses and its indexes, and a
-- third of that index maintenance was pulses_page_by_team, which served only the subteamId filter
-- of GET /pulses. One index now serves every page: pulses_page keeps its order (org_id,
-- created_at DESC, id DESC; id is unique within an organization, so later columns never reorder it)
-- and carries subteam_id and level as trailing key columns, so that a team or level filter is
-- checked on the index entry, without reading the row. A filtered page reads the range newest first
-- and skips entries of other teams or levels (docs/decisions.md has the measured costs).
DROP INDEX pulses_page_by_team;
DROP INDEX pulses_page;
CREATE INDEX pulses_page ON pulses (org_id, created_at DESC, id DESC, subteam_id, level);
