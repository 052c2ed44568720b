-- Operators find an endpoint or a delivery by its id alone (`webhooks remove ID`, `webhooks replay
-- DELIVERY_ID`). Those lookups need an index, not a uniqueness of their own: the primary keys
-- (org_id, id) already make each row unique, and a unique index without org_id could not be kept
-- on a table distributed by organization (test/db/schema-distribution.test.ts). Ids are random
-- (whe_ / whd_ + 128 bits), so one id names one row in practice.
DROP INDEX webhook_endpoints_by_id;
CREATE INDEX webhook_endpoints_by_id ON webhook_endpoints (id);
DROP INDEX webhook_deliveries_by_id;
CREATE INDEX webhook_deliveries_by_id ON webhook_deliveries (id);
