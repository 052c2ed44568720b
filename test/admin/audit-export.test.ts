import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { csvCell as linksCsvCell } from '../../src/domain/checkins/rounds.js';
import { csvCell } from '../../src/domain/csv.js';
import { recordAudit } from '../../src/domain/audit.js';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';
import { parseCsv } from '../helpers/csv.js';
import { createAdminTest, type AdminTest } from './helpers.js';

/**
 * Issue 52, item 4 (the operator's side): the audit log exported over a range as JSON lines or CSV,
 * oldest first and a batch at a time; CSV cells never read as formulas; the export recorded in the
 * log; the organization's retention read and changed, with its bounds.
 */
const ORG = '/admin/v1/organizations';
const BASE = Date.parse('2026-03-02T10:00:00.000Z');
const at = (s: number) => new Date(BASE + s * 1000).toISOString();

const dataset = {
  organizations: [
    { id: 'org_x', name: 'X', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
    { id: 'org_f', name: 'F', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
    { id: 'org_gone', name: 'Gone', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
  ],
};

describe('audit log export and retention (operator API)', () => {
  let t: AdminTest;
  const insertMany = sql(
    'test.audit.many',
    `INSERT INTO audit_events (org_id, id, created_at, actor_kind, actor_id, actor_label, action, target_kind, target_id, address, details)
     SELECT 'org_x', 'aud_x' || lpad(i::text, 5, '0'), $1::timestamptz + make_interval(secs => i), 'operator', NULL, 'operator', 'team.created', 'team', 'team_' || i, '198.51.100.7', jsonb_build_object('name', 'Team ' || i)
       FROM generate_series(0, 1202) AS i`,
  );

  beforeAll(async () => {
    t = await createAdminTest({ dataset });
    await t.db.query(insertMany, [at(0)]);
    expect((await t.call('DELETE', `${ORG}/org_gone`)).statusCode).toBe(200);
  }, 60_000);
  afterAll(() => t?.close());

  const exportRows = (orgId: string) =>
    t.db.query<{ actor_label: string; address: string; details: Record<string, unknown> }>(
      sql(
        'test.audit.exports',
        `SELECT actor_label, address, details FROM audit_events WHERE org_id = $1 AND action = 'audit_log.exported' ORDER BY created_at, id`,
      ),
      [orgId],
    );

  it('exports a range as JSON lines, oldest first, across batches, and records the export', async () => {
    const res = await t.call('GET', `${ORG}/org_x/audit-events/export?format=jsonl&from=${at(1)}&to=${at(1201)}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-disposition']).toBe('attachment; filename="audit-log.jsonl"');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.endsWith('\n')).toBe(true);
    const lines = res.body
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l));
    // from inclusive, to exclusive: seconds 1 to 1200, more than two batches of 500.
    expect(lines).toHaveLength(1200);
    expect(lines[0]).toEqual({
      id: 'aud_x00001',
      createdAt: at(1),
      actor: { kind: 'operator', id: null, label: 'operator' },
      action: 'team.created',
      target: { kind: 'team', id: 'team_1' },
      address: '198.51.100.7',
      details: { name: 'Team 1' },
    });
    expect(lines.map((e) => e.id)).toEqual(Array.from({ length: 1200 }, (_, i) => `aud_x${String(i + 1).padStart(5, '0')}`));
    // The same items as the paged list, in the other order.
    const page = (await t.call('GET', `${ORG}/org_x/audit-events?limit=100&actorKind=operator&action=team.created`)).json();
    expect(page.items[0]).toEqual({
      ...lines.at(-1),
      id: 'aud_x01202',
      createdAt: at(1202),
      target: { kind: 'team', id: 'team_1202' },
      details: { name: 'Team 1202' },
    });

    const [recorded] = await exportRows('org_x');
    expect(recorded).toEqual({
      actor_label: 'operator',
      address: '127.0.0.1',
      details: { format: 'jsonl', from: at(1), to: at(1201), redacted: false },
    });
  });

  it('exports CSV with a header, quoting, and no cell that a spreadsheet reads as a formula', async () => {
    const hostile = {
      kind: 'member' as const,
      memberId: 'mem_evil',
      email: '=HYPERLINK("http://evil.example","x")@evil.example',
      address: '-1+2',
    };
    await t.db.transaction((tx) =>
      recordAudit(
        tx,
        'org_f',
        hostile,
        { action: 'team.created', target: { kind: 'team', id: '+SUM(A1)' }, details: { name: '@cmd', note: 'a,b "c"\nd', tab: '\t=1' } },
        new Date(at(5)),
      ),
    );
    const res = await t.call('GET', `${ORG}/org_f/audit-events/export?format=csv&to=${at(6)}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="audit-log.csv"');
    const id = parseCsv(res.body)[1][0];
    // details as jsonb keeps them: shorter keys first.
    expect(res.body).toBe(
      'id,createdAt,actorKind,actorId,actorLabel,action,targetKind,targetId,address,details\r\n' +
        `${id},${at(5)},member,mem_evil,"'=HYPERLINK(""http://evil.example"",""x"")@evil.example",team.created,team,"'+SUM(A1)","'-1+2","{""tab"":""\\t=1"",""name"":""@cmd"",""note"":""a,b \\""c\\""\\nd""}"\r\n`,
    );
    for (const cell of parseCsv(res.body).flat()) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it('csvCell guards every character that starts a formula, and quotes as RFC 4180 says', () => {
    expect(['=1+1', '+1', '-1', '@A1', '\t=1', '\r=1', 'plain', 'a,b', 'say "hi"', 'two\nlines', '', null, 42].map(csvCell)).toEqual([
      `"'=1+1"`,
      `"'+1"`,
      `"'-1"`,
      `"'@A1"`,
      `"'\t=1"`,
      `"'\r=1"`,
      'plain',
      '"a,b"',
      '"say ""hi"""',
      '"two\nlines"',
      '',
      '',
      '42',
    ]);
    // The check-in links' rule, unchanged, agrees wherever it guards (the shared one adds the carriage return).
    for (const v of ['=1+1', '+1', '-1', '@A1', '\t=1', 'plain', 'a,b', 'say "hi"', 'two\nlines', '']) expect(csvCell(v), v).toBe(linksCsvCell(v));
  });

  it('refuses a bad format, date-time or range, and an unknown organization, recording nothing', async () => {
    const before = (await exportRows('org_x')).length;
    const refused = async (query: string, status: number, code: string, message?: string) => {
      const res = await t.call('GET', `${ORG}/org_x/audit-events/export?${query}`);
      expect([res.statusCode, res.json().error.code], query).toEqual([status, code]);
      if (message) expect(res.json().error.message).toBe(message);
    };
    await refused('format=xml', 400, 'invalid_request');
    await refused('', 400, 'invalid_request');
    await refused('format=csv&from=yesterday', 400, 'invalid_request');
    await refused(`format=csv&from=${at(10)}&to=${at(10)}`, 400, 'invalid_request', "'from' must be before 'to'.");
    await refused('format=csv&limit=5', 400, 'invalid_request');
    const unknown = await t.call('GET', `${ORG}/org_nope/audit-events/export?format=csv`);
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'not_found']);
    expect(await exportRows('org_x')).toHaveLength(before);
    // A deleted organization keeps its log, and it can be exported.
    const gone = await t.call('GET', `${ORG}/org_gone/audit-events/export?format=jsonl`);
    expect(gone.statusCode).toBe(200);
    expect(
      gone.body
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).action),
    ).toEqual(['organization.deleted']);
  });

  it('the operator document names the export with both media types, and the retention operations', async () => {
    const doc = (await t.call('GET', '/admin/v1/openapi.json')).json();
    const op = doc.paths['/admin/v1/organizations/{orgId}/audit-events/export'].get;
    expect(op.operationId).toBe('exportAuditEvents');
    expect(Object.keys(op.responses['200'].content)).toEqual(['application/x-ndjson', 'text/csv']);
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual([
      'path:orgId',
      'query:format',
      'query:from',
      'query:to',
    ]);
    const retention = doc.paths['/admin/v1/organizations/{orgId}/retention'];
    expect([retention.get.operationId, retention.patch.operationId]).toEqual(['getRetention', 'updateRetention']);
  });

  it('reads and changes the retention within its bounds, each change in the log', async () => {
    expect((await t.call('GET', `${ORG}/org_x/retention`)).json()).toEqual({ auditDays: 365, deliveryDays: 30 });
    const changed = await t.call('PATCH', `${ORG}/org_x/retention`, { auditDays: 90 });
    expect([changed.statusCode, changed.json()]).toEqual([200, { auditDays: 90, deliveryDays: 30 }]);
    expect((await t.call('PATCH', `${ORG}/org_x/retention`, { deliveryDays: 7 })).json()).toEqual({ auditDays: 90, deliveryDays: 7 });
    expect((await t.call('GET', `${ORG}/org_x/retention`)).json()).toEqual({ auditDays: 90, deliveryDays: 7 });
    const rows = await t.db.query<{ details: unknown; actor_label: string }>(
      sql(
        'test.audit.retention',
        `SELECT details, actor_label FROM audit_events WHERE org_id = 'org_x' AND action = 'retention.updated' ORDER BY created_at, id`,
      ),
    );
    expect(rows).toEqual([
      { details: { auditDays: 90, deliveryDays: 30 }, actor_label: 'operator' },
      { details: { auditDays: 90, deliveryDays: 7 }, actor_label: 'operator' },
    ]);
    for (const body of [{ auditDays: 29 }, { auditDays: 3651 }, { deliveryDays: 0 }, { deliveryDays: 366 }, { auditDays: 100.5 }, {}, { other: 1 }]) {
      const res = await t.call('PATCH', `${ORG}/org_x/retention`, body);
      expect([res.statusCode, res.json().error.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
    }
    expect((await t.call('GET', `${ORG}/org_x/retention`)).json()).toEqual({ auditDays: 90, deliveryDays: 7 });
    // A deleted organization is read, not changed; an unknown one is neither.
    expect((await t.call('GET', `${ORG}/org_gone/retention`)).json()).toEqual({ auditDays: 365, deliveryDays: 30 });
    expect((await t.call('PATCH', `${ORG}/org_gone/retention`, { auditDays: 40 })).statusCode).toBe(404);
    expect((await t.call('GET', `${ORG}/org_nope/retention`)).statusCode).toBe(404);
  });
});

describe('climate-pulse audit export and audit retention', { timeout: 300_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  const file = join(tmpdir(), `audit-ds-export-${process.pid}.json`);
  beforeAll(async () => {
    cdb = await createCliDatabase();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, JSON.stringify(dataset));
    expect((await cli(['load', file], cdb.env)).code).toBe(0);
  });
  afterAll(() => cdb?.close());

  it('writes the log as CSV to a new file, or JSON lines to standard output, and shows and sets the retention', async () => {
    expect((await cli(['orgs', 'update', '--org', 'org_x', '--name', '=Renamed'], cdb.env)).code).toBe(0);
    const out = join(tmpdir(), `audit-export-${process.pid}-${Date.now()}.csv`);
    const csv = await cli(['audit', 'export', '--org', 'org_x', '--format', 'csv', '--output', out], cdb.env);
    expect([csv.code, csv.stdout, csv.stderr]).toEqual([0, '', '']);
    const records = parseCsv(readFileSync(out, 'utf8'));
    expect(records[0]).toEqual(['id', 'createdAt', 'actorKind', 'actorId', 'actorLabel', 'action', 'targetKind', 'targetId', 'address', 'details']);
    expect(records.slice(1).map((r) => [r[2], r[4], r[5], r[8], r[9]])).toEqual([
      ['operator', 'operator', 'organization.updated', '127.0.0.1', '{"name":"=Renamed","changed":["name"]}'],
    ]);
    // Never over an existing file.
    const again = await cli(['audit', 'export', '--org', 'org_x', '--format', 'csv', '--output', out], cdb.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^climate-pulse: cannot write .*EEXIST/);

    const jsonl = await cli(['audit', 'export', '--org', 'org_x'], cdb.env);
    expect(jsonl.code).toBe(0);
    expect(
      jsonl.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['organization.updated', 'audit_log.exported', 'audit_log.exported']);
    const none = await cli(['audit', 'export', '--org', 'org_nope', '--output', `${out}.none`], cdb.env);
    expect([none.code, none.stderr.trim()]).toEqual([1, 'climate-pulse: no organization "org_nope"']);
    expect(existsSync(`${out}.none`)).toBe(false);
    const bad = await cli(['audit', 'export', '--org', 'org_x', '--from', '2026-05-01T00:00:00Z', '--to', '2026-04-01T00:00:00Z'], cdb.env);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, "climate-pulse: 'from' must be before 'to'."]);

    const shown = await cli(['audit', 'retention', '--org', 'org_x'], cdb.env);
    expect([shown.code, shown.stdout]).toEqual([0, 'audit log: 365 days\nwebhook delivery log: 30 days\n']);
    const set = await cli(['audit', 'retention', '--org', 'org_x', '--audit-days', '400', '--delivery-days', '14'], cdb.env);
    expect([set.code, set.stdout]).toEqual([0, 'audit log: 400 days\nwebhook delivery log: 14 days\n']);
    const refused = await cli(['audit', 'retention', '--org', 'org_x', '--audit-days', '10'], cdb.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^climate-pulse: .*auditDays/);
    const noOrg = await cli(['audit', 'retention'], cdb.env);
    expect([noOrg.code, noOrg.stderr.trim()]).toEqual([1, "climate-pulse: required option '--org <id>' not specified"]);
  });
});
