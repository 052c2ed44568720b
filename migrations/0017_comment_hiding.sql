-- Issue 28 (CONTRACT.md section 11, "Comments"): an admin hides a released comment, and shows it
-- again, by its handle in the console. Hiding is not moderation: no pulse's status changes, and
-- no count moves (the CLEAN rollups, the frozen samples and `suppressed` are as the release left
-- them), so hiding the comment of one pulse of a cell and of another answer alike but for that
-- comment. A released comment is shown exactly while its pulse is CLEAN and it is not hidden
-- (src/domain/moderation.ts keeps `visible` so).
ALTER TABLE comment_release_members ADD COLUMN hidden boolean NOT NULL DEFAULT false;

-- A handle is the comment's week and its place in the week (its rank, a keyed hash of the
-- organization's salt and the pulse id): the visible ones are found through the answer's index
-- (comment_release_by_week), the hidden ones, which the console lists to show them again, here.
CREATE INDEX comment_release_hidden ON comment_release_members (org_id, week DESC, rank)
  INCLUDE (comment, cell) WHERE hidden;
