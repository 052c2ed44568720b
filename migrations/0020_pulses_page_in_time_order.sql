-- Issue 29: pulses_page was kept newest first (created_at DESC, id DESC). Pulses arrive oldest
-- first (live ingestion, a sorted file, each sorted batch of an import), so every new entry went
-- to the left end of the organization's range, where a full page splits in two halves: the index
-- grew to 116 MB for 1M pulses instead of 65 MB, and a COPY of 1M pulses in time order took 13.1 s
-- instead of 10.7 s. The same columns in ascending order take new pulses at the right end (pages
-- are left full) and serve every page of GET /pulses, newest first, by reading the index backward:
-- a B-tree reads both ways.
--
-- The new index is built before the old one is dropped: the build holds a lock that lets reads of
-- pulses go on (writes of pulses wait for it, about 3 s per million pulses on a small machine), and
-- the drop's exclusive lock is taken only at the end, for the moment until the commit.
CREATE INDEX pulses_page_in_time_order ON pulses (org_id, created_at, id, subteam_id, level);
DROP INDEX pulses_page;
ALTER INDEX pulses_page_in_time_order RENAME TO pulses_page;
