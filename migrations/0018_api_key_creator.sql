-- Issue 27: the API keys page names each key's creator. It was read back from the audit log, where
-- only the newest events were looked at; the key's row now records who made it, in the transaction
-- that makes it: a member's email, 'operator', or an API key's display prefix (the audit log's
-- actor label). Keys made before this migration, or loaded from a dataset file, have none.
ALTER TABLE api_keys ADD COLUMN created_by text CHECK (length(created_by) BETWEEN 1 AND 320);
