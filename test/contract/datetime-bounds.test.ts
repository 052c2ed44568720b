// The first import on purpose: the import's row check is compiled when this module loads, and
// must already see the API's date-time rule (registered through the modules it imports).
import { validate as validateImportRow } from '../../src/domain/import.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/errors.js';
import { instantOf } from '../../src/contract/schemas/date-time.js';
import { loadDataset, type Dataset } from '../../src/domain/dataset.js';
import { createAdminTest, TOKEN, type AdminTest } from '../admin/helpers.js';

const ORG = '/admin/v1/organizations';
const RULE = 'must be an RFC 3339 date-time with an offset or Z, like 2026-11-20T08:15:00Z, from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z';
const pulse = (id: string, createdAt: string) => ({ id, level: 3, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: null, createdAt });

/** Year 0000, past the last instant, and strings that are not a real instant. */
const REFUSED = [
  '0000-01-01T00:00:00.000Z',
  '0000-12-31T23:59:59.999Z',
  '0001-01-01T00:30:00+01:00', // 0000-12-31T23:30Z
  '9999-12-31T23:30:00-01:00', // 10000-01-01T00:30Z
  '2030-06-30T23:59:60Z', // a leap second
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2100-02-29T00:00:00Z',
  '2026-11-20T24:00:00Z',
  '2026-11-20T10:60:00Z',
  '2026-13-01T00:00:00Z',
  '2026-11-20T10:00:00+24:00',
  '2026-11-20T10:00:00+01', // an offset without minutes
  '2026-11-20T10:00:00+0100',
  '2026-11-20T10:00:00', // no offset
  '+010000-01-01T00:00:00.000Z',
  // The stored form itself takes a shorter path: the same refusals there.
  '2026-02-30T00:00:00.000Z',
  '2025-02-29T12:00:00.000Z',
  '2026-11-20T24:00:00.000Z',
  '2030-06-30T23:59:60.000Z',
  '2026-00-10T00:00:00.000Z',
  '2026-11-00T00:00:00.000Z',
];
const ACCEPTED: [string, string][] = [
  ['0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00.000Z'],
  ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ['0001-01-01T01:00:00+01:00', '0001-01-01T00:00:00.000Z'],
  ['9999-12-31T22:59:59.999-01:00', '9999-12-31T23:59:59.999Z'],
  ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
  ['0050-06-15T12:00:00.000Z', '0050-06-15T12:00:00.000Z'], // not read as 1950
  ['2000-02-29t10:00:00.1239z', '2000-02-29T10:00:00.123Z'], // past the millisecond: dropped, as stored
  ['2026-11-20 10:00:00+05:30', '2026-11-20T04:30:00.000Z'],
];

describe('date-time bounds (docs/api.md, time and numbers): one rule, every door', () => {
  it('the rule: real instants from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, nothing else', () => {
    for (const text of REFUSED) expect(instantOf(text), text).toBeNull();
    for (const [text, stored] of ACCEPTED) expect(new Date(instantOf(text)!).toISOString(), text).toBe(stored);
  });

  it('an imported row (NDJSON or CSV) with createdAt in year 0000 or on a leap second is a bad row, not a database error', () => {
    for (const text of REFUSED) {
      expect(validateImportRow(pulse('p_1', text), new Set(), new Set()), text).toBe('createdAt: must match format "date-time"');
    }
    for (const [text, stored] of ACCEPTED) {
      expect(validateImportRow(pulse('p_1', text), new Set(), new Set()), text).toMatchObject({ createdAt: stored });
    }
  });

  describe('the operator API and the dataset file', () => {
    let t: AdminTest;
    beforeAll(async () => {
      t = await createAdminTest({ dataset: { organizations: [{ id: 'org_a', name: 'A', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] } });
    });
    afterAll(() => t.close());

    it('ingest with createdAt in year 0000: 400 invalid_request naming pulses[0].createdAt, nothing written (was a 500)', async () => {
      for (const text of ['0000-01-01T00:00:00.000Z', '9999-12-31T23:30:00-01:00', '2030-06-30T23:59:60Z', '2026-02-30T00:00:00Z']) {
        const res = await t.call('POST', `${ORG}/org_a/pulses`, { pulses: [pulse('ok_1', '2026-11-02T09:00:00.000Z'), pulse('bad_1', text)] });
        expect(res.statusCode, text).toBe(400);
        expect(res.json()).toEqual({ error: { code: 'invalid_request', message: `Body field 'pulses[1].createdAt' ${RULE}.` } });
      }
      const count = await t.db.query<{ n: number }>({ name: 'test.count', text: "SELECT count(*)::int AS n FROM pulses WHERE org_id = 'org_a'" });
      expect(count[0].n).toBe(0);
    });

    it('ingest on the first and the last instant is stored as sent', async () => {
      const res = await t.call('POST', `${ORG}/org_a/pulses`, {
        pulses: [pulse('first', '0001-01-01T00:00:00.000Z'), pulse('last', '9999-12-31T23:59:59.999Z')],
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ inserted: 2, unchanged: 0 });
    });

    it('a key with expiresAt 2030-06-30T23:59:60Z (a leap second): 400 naming expiresAt (was a 500)', async () => {
      for (const text of ['2030-06-30T23:59:60Z', '10000-01-01T00:00:00Z', '2030-06-31T00:00:00Z', '2030-06-30T12:00:00+01']) {
        const res = await t.call('POST', `${ORG}/org_a/keys`, { name: 'leap', expiresAt: text });
        expect(res.statusCode, text).toBe(400);
        expect(res.json().error.code).toBe('invalid_request');
        expect(res.json().error.message, text).toMatch(/^Body field 'expiresAt' /);
      }
      const ok = await t.call('POST', `${ORG}/org_a/keys`, { name: 'last', expiresAt: '9999-12-31T23:59:59.999Z' });
      expect(ok.statusCode).toBe(201);
      expect(ok.json().expiresAt).toBe('9999-12-31T23:59:59.999Z');
    });

    it('the import stream (NDJSON and CSV) with createdAt in year 0000: the bad row is reported by line, nothing is written', async () => {
      const url = `${ORG}/org_a/pulses/import`;
      const last = (body: string) => JSON.parse(body.trim().split('\n').at(-1)!);
      const ndjson = `${[pulse('nd_1', '2026-11-02T09:00:00.000Z'), pulse('nd_2', '0000-06-01T00:00:00.000Z')].map((p) => JSON.stringify(p)).join('\n')}\n`;
      const csv =
        'id,level,reason,comment,moderationStatus,subteamId,createdAt\ncsv_1,3,,,CLEAN,,2026-11-02T10:00:00Z\ncsv_2,3,,,CLEAN,,2030-06-30T23:59:60Z\n';
      for (const [payload, type] of [
        [ndjson, 'application/x-ndjson'],
        [csv, 'text/csv'],
      ]) {
        const res = await t.admin.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type } });
        expect(res.statusCode).toBe(200);
        expect(last(res.body), type).toEqual({
          error: { code: 'invalid_request', message: 'import aborted: 1 bad row(s); nothing was written' },
          summary: expect.objectContaining({
            imported: 0,
            aborted: true,
            problems: [{ line: type === 'text/csv' ? 3 : 2, message: 'createdAt: must match format "date-time"' }],
          }),
        });
      }
    });

    it('a dataset file with a date-time in year 0000 is refused whole, naming the value (was a database error)', async () => {
      const org = (extra: Record<string, unknown>) => ({ id: 'org_file', name: 'F', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', ...extra });
      const cases: [Record<string, unknown>, string][] = [
        [{ createdAt: '0000-01-01T00:00:00.000Z' }, 'organizations[0].createdAt'],
        [{ deletedAt: '2026-11-20T23:59:60Z' }, 'organizations[0].deletedAt'],
        [{ pulses: [pulse('p_1', '2026-11-02T09:00:00.000Z'), pulse('p_2', '0000-01-01T00:00:00.000Z')] }, 'organizations[0].pulses[1].createdAt'],
        [{ teams: [{ id: 'team_1', name: 'T', createdAt: '9999-12-31T23:00:00-01:00' }] }, 'organizations[0].teams[0].createdAt'],
        [
          {
            actions: [
              {
                id: 'ac_1',
                title: 'T',
                startDate: '2026-11-02T09:00:00Z',
                endDate: '2026-02-30T00:00:00Z',
                status: 'active',
                createdAt: '2026-11-02T09:00:00Z',
              },
            ],
          },
          'organizations[0].actions[0].endDate',
        ],
      ];
      for (const [extra, path] of cases) {
        const file = { organizations: [org(extra)] } as Dataset;
        await expect(loadDataset(t.db, file), path).rejects.toThrow(new ApiError('invalid_request', `${path}: ${RULE}`));
      }
      const orgs = await t.db.query<{ n: number }>({ name: 'test.orgs', text: "SELECT count(*)::int AS n FROM organizations WHERE id = 'org_file'" });
      expect(orgs[0].n).toBe(0);
    });
  });
});
