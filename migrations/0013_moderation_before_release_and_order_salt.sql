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
--   extension needed). Organizations that exist already keep the key they were ordered by, their
--   id; erased and created again, they get a random salt like every new row.
--   Added without a default, filled, then given its default: on Citus, organizations is a
--   reference table, and a volatile default filled in by ADD COLUMN would differ between replicas.
ALTER TABLE organizations ADD COLUMN order_salt bytea;
UPDATE organizations SET order_salt = convert_to(id, 'UTF8');
ALTER TABLE organizations ALTER COLUMN order_salt SET DEFAULT substring(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())) FROM 1 FOR 16);
ALTER TABLE organizations ALTER COLUMN order_salt SET NOT NULL;
