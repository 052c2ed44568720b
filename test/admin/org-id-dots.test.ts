import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/contract/errors.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createCliDatabase, runCliInProcess as cli } from '../helpers/cli.js';
import { createAdminTest, type AdminTest } from './helpers.js';

const RULE = 'must be 1-128 characters of A-Z a-z 0-9 . _ : -, and not . or ..';
const org = (id: string) => ({ id, name: 'Dots', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' });

/** A URL-normalizing client sends /admin/v1/organizations/../keys as /admin/v1/keys: such an id could never be used. */
describe('organization ids . and .. are refused wherever an organization is created', () => {
  let t: AdminTest;
  beforeAll(async () => {
    t = await createAdminTest();
  });
  afterAll(() => t.close());

  it('the operator API: POST /admin/v1/organizations with id . or .. is 400 invalid_request naming id, and nothing is created', async () => {
    for (const id of ['.', '..']) {
      const res = await t.call('POST', '/admin/v1/organizations', { id, name: 'Dots', plan: 'business' });
      expect(res.statusCode, id).toBe(400);
      expect(res.json()).toEqual({ error: { code: 'invalid_request', message: `Body field 'id' ${RULE}.` } });
    }
    const rows = await t.db.query<{ id: string }>({ name: 'test.dot_orgs', text: "SELECT id FROM organizations WHERE id IN ('.', '..')" });
    expect(rows).toEqual([]);
    // Dots inside an id, or three of them, are no path segment a client rewrites.
    for (const id of ['...', '.org', 'org.', 'org..x']) {
      const res = await t.call('POST', '/admin/v1/organizations', { id, name: 'Dots', plan: 'business' });
      expect(res.statusCode, id).toBe(201);
      expect(res.json().id).toBe(id);
    }
  });

  it('the dataset file: an organization with id . or .. refuses the whole file, naming the value', async () => {
    for (const id of ['.', '..']) {
      await expect(loadDataset(t.db, { organizations: [org('org_fine'), org(id)] })).rejects.toThrow(
        new ApiError('invalid_request', `organizations[1].id: ${RULE}`),
      );
    }
    const rows = await t.db.query<{ id: string }>({ name: 'test.file_orgs', text: "SELECT id FROM organizations WHERE id IN ('.', '..', 'org_fine')" });
    expect(rows).toEqual([]);
  });

  it('the CLI: orgs create --id .. and a dataset with id . are refused with the rule', { timeout: 120_000 }, async () => {
    const cdb = await createCliDatabase();
    try {
      const created = await cli(['orgs', 'create', '--id', '..', '--name', 'Dots', '--plan', 'business'], cdb.env);
      expect(created.code).not.toBe(0);
      expect(created.stderr).toContain(`Body field 'id' ${RULE}.`);
      const file = join(tmpdir(), `org-id-dots-${process.pid}.json`);
      writeFileSync(file, JSON.stringify({ organizations: [org('.')] }));
      const loaded = await cli(['load', file], cdb.env);
      expect(loaded.code).not.toBe(0);
      expect(loaded.stderr).toContain(`organizations[0].id: ${RULE}`);
    } finally {
      await cdb.close();
    }
  });
});
