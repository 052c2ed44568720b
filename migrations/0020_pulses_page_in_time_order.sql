-- Issue 29: pulses_page was kept newest first (created_at DESC, id DESC). Pulses arrive oldest
-- first (live ingestion, a sorted file, each sorted batch of an import), so every new entry went
-- to the left end of the organization's range, where a full page splits in two halves: the index
-- grew to 116 MB for 1M pulses instead of 65 MB, and a COPY of 1M pulses in time order took 13.1 s
-- instead of 10.7 s. The same columns in ascending order take new pulses at the right end (pages
-- are left full) and serve every page of GET /pulses, newest first, by reading the index backward:
-- a B-tree reads both ways.
DROP INDEX pulses_page;
CREATE INDEX pulses_page ON pulses (org_id, created_at, id, subteam_id, level);
