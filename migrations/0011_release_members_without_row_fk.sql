-- Issue 17's release bench: a week's release writes one row per pulse into comment_release_members,
-- and its foreign key to organizations was checked once per row (1,000 checks, 15 ms of a 1,000-pulse
-- week's 40 ms release). A member is made only from a pulse of its organization, inside the release
-- of a week of that organization, and comment_cells (one row per cell) and comment_frozen_groups
-- keep their keys to organizations, as the rollups do for pulses (migration 0007): the per-row check
-- guarded nothing they do not.
ALTER TABLE comment_release_members DROP CONSTRAINT comment_release_members_org_id_fkey;
