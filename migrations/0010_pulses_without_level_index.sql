-- Issue 19: the import of 1M pulses spent 15 s of its 42 s maintaining pulses' three secondary
-- indexes, one of them for the `level` filter of GET /pulses alone. The level filter now reads
-- pulses_page (newest first) and skips the other levels: a page of one level of five reads about
-- 250 index entries on the 1M-pulse organization (4 ms). The cost grows only for a level that is
-- rare in the range (docs/decisions.md); every write pays a third less index maintenance.
DROP INDEX pulses_page_by_level;
