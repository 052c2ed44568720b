import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase, openApp, runCli } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';

const dataset = {
  organizations: [
    { id: 'org_k', name: 'K', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
    { id: 'org_dead', name: 'Dead', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', deletedAt: '2026-02-01T00:00:00.000Z' },
  ],
};

describe('climate-pulse keys', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    const file = join(tmpdir(), `keys-ds-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(dataset));
    const load = await runCli(['load', file], cdb.env);
    expect(load.stdout.trim()).toBe(JSON.stringify({ loaded: { plans: 0, organizations: 2, apiKeys: 0, teams: 0, pulses: 0, pulsesInFrozenWeeks: 0, alerts: 0, actions: 0 } }));
  });
  afterAll(() => cdb.close());

  it('creates a key printed once, lists it without the secret, records its use, and revokes it', async () => {
    const created = await runCli(['keys', 'create', '--org', 'org_k', '--name', 'ci'], cdb.env);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^cp_live_[0-9A-Za-z]{40}$/);
    const prefix = secret.slice(0, 14);
    expect(created.stderr).toContain(`created key ${prefix}… for org_k`);

    const listed = await runCli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env);
    const rows = JSON.parse(listed.stdout);
    expect(rows).toEqual([{ prefix, name: 'ci', createdAt: expect.stringMatching(/Z$/), lastUsedAt: null, revoked: false }]);
    expect(listed.stdout).not.toContain(secret);

    const s = await openApp(cdb.env);
    const ok = await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } });
    expect(ok.statusCode).toBe(200);
    await s.close(); // flushes the batched last-used time

    const table = await runCli(['keys', 'list', '--org', 'org_k'], cdb.env);
    expect(table.stdout.split('\n')[0]).toMatch(/^PREFIX\s+NAME\s+CREATED\s+LAST USED\s+REVOKED$/);
    const after = JSON.parse((await runCli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env)).stdout);
    expect(after[0].lastUsedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const revoked = await runCli(['keys', 'revoke', prefix], cdb.env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${prefix} \\(key_[0-9A-Za-z]+\\) of org_k\\n$`));
    expect(JSON.parse((await runCli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env)).stdout)[0].revoked).toBe(true);

    const s2 = await openApp(cdb.env);
    const refused = await s2.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } });
    expect(refused.statusCode).toBe(401);
    await s2.close();
  });

  it('refuses unknown and deleted organizations and unknown prefixes with one line and exit 1', async () => {
    for (const [args, message] of [
      [['keys', 'create', '--org', 'org_nope'], 'climate-pulse: no organization "org_nope" (or it is deleted)'],
      [['keys', 'create', '--org', 'org_dead'], 'climate-pulse: no organization "org_dead" (or it is deleted)'],
      [['keys', 'list', '--org', 'org_nope'], 'climate-pulse: no organization "org_nope" (or it is deleted)'],
      [['keys', 'revoke', 'cp_live_nothing'], 'climate-pulse: no key with prefix "cp_live_nothing"'],
    ] as const) {
      const r = await runCli([...args], cdb.env);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n').pop()).toBe(message);
    }
    const help = await runCli(['keys', 'create', '--help'], cdb.env);
    expect(help.stdout).toContain('--org <id>');
  });

  it.skipIf(!TEST_DATABASE_URL)('a running server refuses a key revoked by another process within the cache bound', async () => {
    const secret = (await runCli(['keys', 'create', '--org', 'org_k'], cdb.env)).stdout.trim();
    const s = await openApp(cdb.env, { KEY_CACHE_TTL_MS: '300' });
    try {
      expect((await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(200);
      expect((await runCli(['keys', 'revoke', secret.slice(0, 14)], cdb.env)).code).toBe(0);
      await new Promise((r) => setTimeout(r, 400));
      expect((await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(401);
    } finally {
      await s.close();
    }
  });
});
