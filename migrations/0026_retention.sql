-- Issue 52, item 4: how long an organization keeps its audit entries and its webhook delivery log,
-- in days, set by an owner (console) or the operator (API, CLI) and enforced by the retention job
-- (src/jobs/retention.ts), which deletes older rows in bounded batches. Defaults and bounds are
-- docs/decisions.md's ("Retention of the audit log and the delivery log"). organizations is a
-- reference table on Citus: a new column there is propagated to every node.
ALTER TABLE organizations ADD COLUMN audit_retention_days integer NOT NULL DEFAULT 365
  CHECK (audit_retention_days BETWEEN 30 AND 3650);
ALTER TABLE organizations ADD COLUMN delivery_retention_days integer NOT NULL DEFAULT 30
  CHECK (delivery_retention_days BETWEEN 1 AND 365);

-- The job deletes an event once none of its deliveries is left; this finds an event's deliveries
-- (the foreign key's cascade used it too) without reading the organization's whole log.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (org_id, event_id);
-- And the events older than the delivery log's retention, oldest first, per organization.
CREATE INDEX webhook_events_by_time ON webhook_events (org_id, created_at);
