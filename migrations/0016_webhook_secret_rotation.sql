-- Issue 28: rotating a webhook endpoint's signing secret (docs/webhooks.md). The secret it replaces
-- stays valid for 24 hours: until previous_secret_expires_at, every attempt is signed with both
-- (two `v1,` entries in webhook-signature), so a receiver can switch secrets at its own pace.
--
-- Two nullable columns of a table distributed by org_id under Citus: ADD COLUMN without a default
-- or a volatile expression is propagated to every shard as it is. A rotation sets both at once,
-- and the CHECK keeps it so (a plain CHECK on the row's own columns: Citus runs it on each shard).
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at timestamptz;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_previous_secret_whole
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));
