-- Issue 26: two privacy rules of CONTRACT.md section 5 (docs/privacy.md).
--
-- * Moderation before release. GET /pulses showed the current status of a pulse that no release
--   had covered yet, so a moderator's flag (and un-flag) of a pulse was visible before its comment
--   was released, and named it afterwards. The column that held "the status at the release, while
--   it differs" now holds "the status GET /pulses shows, while it differs from the current one":
--   until a release covers the pulse, the status it arrived with; from that release on, the status
--   it had then. The moderation operation keeps it; a release clears it for the pulses it covers.
ALTER TABLE pulses RENAME COLUMN status_at_release TO shown_status;
-- A release finds the few pulses of its weeks whose shown status differs, without reading the week.
CREATE INDEX pulses_shown_status ON pulses (org_id, created_at) WHERE shown_status IS NOT NULL;

-- * The order salt. Comments of a week are ordered by HMAC(server secret, salt || 0x00 || pulse id).
--   Keyed by the organization id, an organization erased and created again with the same id and
--   the same pulse ids mirrored the old order. The salt is made with the organization's row: 128
--   bits of a hash of two random UUIDs (244 bits from the server's strong random source; no
--   extension needed). On Citus, organizations is a reference table: the default is evaluated once,
--   on the coordinator, for every replica.
--   Organizations that exist already keep NULL: they keep the key they were ordered by, their id
--   (src/db/repositories/comments.ts), and get a random salt only when erased and created again.
--   Not filled in here: Citus refuses an UPDATE of a reference table through a non-immutable
--   function (convert_to), and a volatile default filled in by ADD COLUMN would differ between replicas.
ALTER TABLE organizations ADD COLUMN order_salt bytea;
ALTER TABLE organizations ALTER COLUMN order_salt SET DEFAULT substring(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())) FROM 1 FOR 16);
