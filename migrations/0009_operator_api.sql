-- The operator API (issue 18, CONTRACT.md sections 7 and 10): key scopes and expiry, and the
-- erasure of an organization.

-- read_write: the seed's "keys permit reading and writing"; read: GET only (POST and PATCH are
-- 403 insufficient_scope). A key past expires_at is refused like a revoked one.
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'read_write' CHECK (scope IN ('read_write', 'read'));
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

-- Pulses stay append-only, with one exception: erasing a whole organization
-- (DELETE /admin/v1/organizations/{id}?erase=true), which deletes its rollups in the same
-- transaction, so no rollup can drift from the rows. The eraser names the organization in a
-- transaction-local setting; any other delete or change is refused as before.
CREATE OR REPLACE FUNCTION pulses_refuse_rollup_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND OLD.org_id = current_setting('climate_pulse.erase_org', true) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'pulses are append-only: level, created_at, subteam_id and org_id cannot change, and rows cannot be deleted'
    USING ERRCODE = 'restrict_violation';
END
$$;
