import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase, openApp, runCli, runCliInProcess as cli } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';

const dataset = {
  organizations: [
    { id: 'org_k', name: 'K', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' },
    { id: 'org_dead', name: 'Dead', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', deletedAt: '2026-02-01T00:00:00.000Z' },
    // Keys of two organizations with the same display prefix (cp_test_shar), and two of one organization.
    { id: 'org_s1', name: 'S1', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', apiKeys: [{ key: 'cp_test_shared_1111111111', name: 's1' }] },
    {
      id: 'org_s2',
      name: 'S2',
      plan: 'business',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [
        { key: 'cp_test_shared_2222222222', name: 's2a' },
        { key: 'cp_test_shared_3333333333', name: 's2b' },
      ],
    },
  ],
};

// The CLI runs in this process (runCliInProcess) except where a second process is the point.
describe('climate-pulse keys', { timeout: 300_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    const file = join(tmpdir(), `keys-ds-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(dataset));
    const load = await cli(['load', file, '--json'], cdb.env);
    expect(load.stdout.trim()).toBe(
      JSON.stringify({ loaded: { plans: 0, organizations: 4, apiKeys: 3, teams: 0, pulses: 0, pulsesInFrozenWeeks: 0, alerts: 0, actions: 0 } }),
    );
  });
  afterAll(() => cdb.close());

  it('creates a key printed once, lists it without the secret, records its use, and revokes it', async () => {
    const created = await cli(['keys', 'create', '--org', 'org_k', '--name', 'ci'], cdb.env);
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^cp_live_[0-9A-Za-z]{40}$/);
    const prefix = secret.slice(0, 14);
    expect(created.stderr).toMatch(new RegExp(`^created key ${prefix}… \\(key_[0-9A-Za-z]{16}\\) for org_k\\. `));

    const listed = await cli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env);
    const rows = JSON.parse(listed.stdout);
    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^key_/),
        prefix,
        name: 'ci',
        scope: 'read_write',
        createdAt: expect.stringMatching(/Z$/),
        expiresAt: null,
        lastUsedAt: null,
        revoked: false,
      },
    ]);
    expect(listed.stdout).not.toContain(secret);

    const s = await openApp(cdb.env);
    const ok = await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } });
    expect(ok.statusCode).toBe(200);
    await s.close(); // flushes the batched last-used time

    const table = await cli(['keys', 'list', '--org', 'org_k'], cdb.env);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+NAME\s+SCOPE\s+CREATED\s+EXPIRES\s+LAST USED\s+REVOKED$/);
    const after = JSON.parse((await cli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env)).stdout);
    expect(after[0].lastUsedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const revoked = await cli(['keys', 'revoke', '--org', 'org_k', prefix], cdb.env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${prefix} \\(key_[0-9A-Za-z]+\\) of org_k\\n$`));
    expect(JSON.parse((await cli(['keys', 'list', '--org', 'org_k', '--json'], cdb.env)).stdout)[0].revoked).toBe(true);

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
      [['keys', 'revoke', '--org', 'org_k', 'cp_live_nothing'], 'climate-pulse: no key with id or prefix "cp_live_nothing" in org_k'],
      [['keys', 'revoke', '--org', 'org_nope', 'cp_live_nothing'], 'climate-pulse: no organization "org_nope" (or it is deleted)'],
    ] as const) {
      const r = await cli([...args], cdb.env);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n').pop()).toBe(message);
    }
    const help = await cli(['keys', 'create', '--help'], cdb.env);
    expect(help.stdout).toContain('--org <id>');
  });

  it.skipIf(!TEST_DATABASE_URL)('a running server refuses a key revoked by another process within the cache bound', async () => {
    const secret = (await cli(['keys', 'create', '--org', 'org_k'], cdb.env)).stdout.trim();
    const s = await openApp(cdb.env, { KEY_CACHE_TTL_MS: '300' });
    try {
      expect((await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(200);
      expect((await runCli(['keys', 'revoke', '--org', 'org_k', secret.slice(0, 14)], cdb.env)).code).toBe(0);
      await new Promise((r) => setTimeout(r, 400));
      expect((await s.app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${secret}` } })).statusCode).toBe(401);
    } finally {
      await s.close();
    }
  });

  it("revokes within one organization: a display prefix shared with another organization's key touches only this one (issue 20, finding 4)", async () => {
    const list = async (orgId: string) =>
      JSON.parse((await cli(['keys', 'list', '--org', orgId, '--json'], cdb.env)).stdout) as {
        id: string;
        name: string;
        prefix: string;
        revoked: boolean;
      }[];
    const [s1] = await list('org_s1');
    expect(s1.prefix).toBe('cp_test_shar');
    expect((await list('org_s2')).map((k) => k.prefix)).toEqual(['cp_test_shar', 'cp_test_shar']);

    // Ambiguous inside org_s2: refused, listing both; nothing revoked anywhere.
    const ambiguous = await cli(['keys', 'revoke', '--org', 'org_s2', 'cp_test_shar'], cdb.env);
    expect(ambiguous.code).toBe(1);
    const [a, b] = await list('org_s2');
    expect(ambiguous.stderr.trim()).toBe(
      `climate-pulse: "cp_test_shar" matches 2 keys of org_s2: ${a.id} (cp_test_shar), ${b.id} (cp_test_shar); give the key id`,
    );
    expect([...(await list('org_s1')), ...(await list('org_s2'))].every((k) => !k.revoked)).toBe(true);

    // Unambiguous inside org_s1 although org_s2 has two keys with that prefix.
    const one = await cli(['keys', 'revoke', '--org', 'org_s1', 'cp_test_shar'], cdb.env);
    expect(one.stdout).toBe(`revoked cp_test_shar (${s1.id}) of org_s1\n`);
    expect((await list('org_s1'))[0].revoked).toBe(true);
    expect((await list('org_s2')).map((k) => k.revoked)).toEqual([false, false]);
    // Another organization's key id is unknown here.
    expect((await cli(['keys', 'revoke', '--org', 'org_s1', a.id], cdb.env)).stderr.trim()).toBe(`climate-pulse: no key with id or prefix "${a.id}" in org_s1`);
    expect((await cli(['keys', 'revoke', '--org', 'org_s2', b.id], cdb.env)).stdout).toBe(`revoked cp_test_shar (${b.id}) of org_s2\n`);
    expect((await list('org_s2')).map((k) => k.revoked)).toEqual([false, true]);
  });

  it('creates a read-only key with an expiry', async () => {
    const r = await cli(['keys', 'create', '--org', 'org_k', '--scope', 'read', '--expires', '2099-01-31'], cdb.env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^created read-only key cp_live_\w{6}… \(key_\w{16}\) for org_k, expiring 2099-01-31T00:00:00.000Z\./);
    const bad = await cli(['keys', 'create', '--org', 'org_k', '--expires', 'tomorrow'], cdb.env);
    expect(bad.stderr.trim()).toBe('climate-pulse: --expires "tomorrow" is not a date (2027-01-31) or a date-time with an offset (2027-01-31T12:00:00Z)');
  });
});
