import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { operatorActor } from '../../src/domain/audit.js';
import { deleteOrganization } from '../../src/domain/orgs.js';
import { purgeExpiredRecords, updateRetention } from '../../src/domain/retention.js';
import { runRetention, startRetentionSchedule } from '../../src/jobs/retention.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Issue 52, item 4: the retention job deletes each organization's audit entries older than its
 * audit days, and its finished deliveries (then the events no delivery refers to) older than its
 * delivery days; never a pending delivery, never another organization's rows; a bounded number
 * of rows per run; one log line of counts per run.
 */
const DAY = 86_400_000;
const NOW = new Date('2026-06-15T12:00:00.000Z');
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();

describe('the retention job', () => {
  let t: TestDatabase;
  const q = (name: string, text: string) => sql(`test.retention.${name}`, text);
  const auditIds = async (orgId: string) =>
    (await t.db.query<{ id: string }>(q('audit_ids', `SELECT id FROM audit_events WHERE org_id = $1 ORDER BY id`), [orgId])).map((r) => r.id);
  const deliveryIds = async (orgId: string) =>
    (await t.db.query<{ id: string }>(q('delivery_ids', `SELECT id FROM webhook_deliveries WHERE org_id = $1 ORDER BY id`), [orgId])).map((r) => r.id);
  const eventIds = async (orgId: string) =>
    (await t.db.query<{ id: string }>(q('event_ids', `SELECT id FROM webhook_events WHERE org_id = $1 ORDER BY id`), [orgId])).map((r) => r.id);

  const audit = (orgId: string, id: string, createdAt: string) =>
    t.db.query(
      q(
        'audit',
        `INSERT INTO audit_events (org_id, id, created_at, actor_kind, actor_label, action, target_kind) VALUES ($1, $2, $3, 'operator', 'operator', 'team.created', 'team')`,
      ),
      [orgId, id, createdAt],
    );
  const event = (orgId: string, id: string, createdAt: string) =>
    t.db.query(q('event', `INSERT INTO webhook_events (org_id, id, type, payload, created_at) VALUES ($1, $2, 'action.created', '{}', $3)`), [
      orgId,
      id,
      createdAt,
    ]);
  const delivery = (orgId: string, id: string, eventId: string, status: string, createdAt: string) =>
    t.db.query(
      q(
        'delivery',
        `INSERT INTO webhook_deliveries (org_id, id, event_id, endpoint_id, status, created_at, next_attempt_at) VALUES ($1, $2, $3, 'whe_1', $4, $5, $5)`,
      ),
      [orgId, id, eventId, status, createdAt],
    );

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, {
      organizations: ['org_a', 'org_b', 'org_del'].map((id) => ({ id, name: id, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' })),
    });
    for (const org of ['org_a', 'org_b', 'org_del']) {
      await t.db.query(
        q('endpoint', `INSERT INTO webhook_endpoints (org_id, id, url, secret) VALUES ($1, 'whe_1', 'https://hooks.example.com/x', 'whsec_x')`),
        [org],
      );
    }
  });
  afterAll(() => t?.close());

  it("deletes what each organization's retention no longer keeps, and nothing else", async () => {
    // org_a keeps 30 days of audit and 2 of deliveries; org_b the defaults (365 and 30).
    await updateRetention(t.db, 'org_a', { auditDays: 30, deliveryDays: 2 }, operatorActor(), new Date(ago(400)));
    for (const org of ['org_a', 'org_b']) {
      await audit(org, `aud_${org}_400`, ago(400));
      await audit(org, `aud_${org}_31`, ago(31));
      await audit(org, `aud_${org}_29`, ago(29));
      await event(org, `whev_${org}_old`, ago(40));
      await delivery(org, `whd_${org}_ok`, `whev_${org}_old`, 'succeeded', ago(40));
      await delivery(org, `whd_${org}_failed`, `whev_${org}_old`, 'failed', ago(3));
      await event(org, `whev_${org}_pending`, ago(40));
      await delivery(org, `whd_${org}_pending`, `whev_${org}_pending`, 'pending', ago(40));
      await event(org, `whev_${org}_new`, ago(1));
      await delivery(org, `whd_${org}_new`, `whev_${org}_new`, 'succeeded', ago(1));
    }
    const lines: { obj: object; msg: string }[] = [];
    const log = { info: (obj: object, msg: string) => lines.push({ obj, msg }), warn: (obj: object, msg: string) => lines.push({ obj, msg }) };
    const report = await runRetention({ db: t.db, log, now: () => NOW });

    // org_a: the audit rows older than 30 days (the retention.updated row of 400 days ago too);
    // both finished deliveries older than 2 days, then their event; never the pending one or its event.
    expect(await auditIds('org_a')).toEqual(['aud_org_a_29']);
    expect(await deliveryIds('org_a')).toEqual(['whd_org_a_new', 'whd_org_a_pending']);
    expect(await eventIds('org_a')).toEqual(['whev_org_a_new', 'whev_org_a_pending']);
    // org_b (365 days, 30 days): the 400-day audit row, and the 40-day finished delivery only.
    expect(await auditIds('org_b')).toEqual(['aud_org_b_29', 'aud_org_b_31']);
    expect(await deliveryIds('org_b')).toEqual(['whd_org_b_failed', 'whd_org_b_new', 'whd_org_b_pending']);
    expect(await eventIds('org_b')).toEqual(['whev_org_b_new', 'whev_org_b_old', 'whev_org_b_pending']);

    expect(report).toEqual({ organizations: 3, auditEvents: 4, deliveries: 3, webhookEvents: 1, unfinished: 0 });
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toBe('retention purge');
    expect(lines[0].obj).toEqual({ retention: { organizations: 3, auditEvents: 4, deliveries: 3, webhookEvents: 1, unfinished: 0, ms: expect.any(Number) } });
    // Counts only: no id, address or content of a row in the line.
    expect(JSON.stringify(lines)).not.toMatch(/aud_|whd_|whev_|org_|operator/);

    // A second run finds nothing more.
    expect(await purgeExpiredRecords(t.db, NOW)).toEqual({ organizations: 3, auditEvents: 0, deliveries: 0, webhookEvents: 0, unfinished: 0 });
  });

  it('deletes in bounded batches: a backlog is worked off over several runs, oldest first', async () => {
    await deleteOrganization(t.db, 'org_del', { erase: false }, operatorActor(), new Date(ago(1)));
    // A deleted organization keeps its log, under its retention: 7 expired rows, batches of 2, 3 a table.
    for (let i = 0; i < 7; i++) await audit('org_del', `aud_del_${i}`, ago(400 + i));
    const first = await purgeExpiredRecords(t.db, NOW, { batch: 2, maxBatches: 3 });
    expect(first).toEqual({ organizations: 3, auditEvents: 6, deliveries: 0, webhookEvents: 0, unfinished: 1 });
    // The oldest went first: the newest expired row is the one left, with the live ones.
    const left = await auditIds('org_del');
    expect(left).toHaveLength(2);
    expect(left.filter((id) => id.startsWith('aud_del_'))).toEqual(['aud_del_0']);
    const second = await purgeExpiredRecords(t.db, NOW, { batch: 2, maxBatches: 3 });
    expect(second).toEqual({ organizations: 3, auditEvents: 1, deliveries: 0, webhookEvents: 0, unfinished: 0 });
    expect(await auditIds('org_del')).toHaveLength(1); // organization.deleted, a day old
  });

  it('runs on its schedule in every process and stops after the run in progress', async () => {
    await audit('org_b', 'aud_sched', ago(500));
    const lines: object[] = [];
    const log = { info: (obj: object) => lines.push(obj), warn: (obj: object) => lines.push(obj) };
    const schedule = startRetentionSchedule({ db: t.db, log, now: () => NOW, intervalMs: 20, firstRunWithinMs: 0, random: () => 0 });
    for (let i = 0; i < 100 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await schedule.stop();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatchObject({ retention: { auditEvents: 1 } });
    expect(lines[1]).toMatchObject({ retention: { auditEvents: 0 } });
    const after = lines.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(lines).toHaveLength(after);
  });
});
