import { statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSocketPath } from '../../src/admin/socket.js';
import { createCliDatabase, runCli, runCliInProcess } from '../helpers/cli.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/process.js';

/**
 * Issue 18's first acceptance line: with the server running on the embedded database, every
 * operator command succeeds through the server's socket (on PostgreSQL, directly), and the
 * server keeps answering throughout: a request loop runs while the CLI does.
 */
const tmp = (name: string) => join(tmpdir(), `cp-op-${process.pid}-${name}`);
const LOOP_KEY = 'cp_test_loop_0123456789abcdef';
const TOKEN = 'admin-token-that-must-never-be-logged-0123456789';
const dataset = {
  organizations: [
    {
      // enterprise: the request loop stays under the per-key limit.
      id: 'org_o',
      name: 'O',
      plan: 'enterprise',
      createdAt: '2026-01-01T00:00:00.000Z',
      apiKeys: [{ key: LOOP_KEY }],
      teams: [{ id: 't1', name: 'One', createdAt: '2026-01-01T00:00:00.000Z' }],
      pulses: [{ id: 'p_1', level: 4, reason: null, comment: 'fine', moderationStatus: 'CLEAN', subteamId: 't1', createdAt: '2026-10-05T08:00:00.000Z' }],
      alerts: [{ id: 'al_1', type: 'LOW_MOOD', message: 'Low', weekISO: '2026-W41', subteamId: null, readAt: null, createdAt: '2026-10-12T06:00:00.000Z' }],
    },
  ],
};

// The CLI runs in this process (runCliInProcess) and reaches the server process through its
// operator socket, as it would from a shell; a second `serve` is a process.
describe('operator commands while the server runs', { timeout: 600_000 }, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let server: ServerProcess;
  let adminPort: number;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    writeFileSync(tmp('ds.json'), JSON.stringify(dataset));
    expect((await runCliInProcess(['load', tmp('ds.json')], cdb.env)).code).toBe(0);
    adminPort = await freePort();
    server = await startServerProcess(
      { ...cdb.env, LOG_LEVEL: 'info', KEY_CACHE_TTL_MS: '2000', ADMIN_PORT: String(adminPort), ADMIN_TOKEN: TOKEN },
      { startTimeoutMs: 150_000 },
    );
  }, 240_000);
  afterAll(async () => {
    await server?.stop();
    await cdb.close();
  });

  it('keys, webhooks, moderation, read marker and import all succeed; the server answers every request meanwhile', async () => {
    const statuses: (number | 'busy')[] = [];
    let looping = true;
    let importing = false;
    const loop = (async () => {
      while (looping) {
        const during = importing;
        const res = await fetch(`${server.url}/v1/org`, { headers: { authorization: `Bearer ${LOOP_KEY}` } });
        // Behind the import's transaction a request waits about a second, then gets 503 with Retry-After (issue 26).
        statuses.push(during && res.status === 503 && Number(res.headers.get('retry-after')) >= 1 ? 'busy' : res.status);
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const cli = async (args: string[]) => {
      const r = await runCliInProcess(args, cdb.env);
      expect(r.stderr.includes('is in use by process'), `${args.join(' ')}: ${r.stderr}`).toBe(false);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r;
    };
    const pub = (key: string, path = '/v1/org') => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    try {
      const created = await cli(['keys', 'create', '--org', 'org_o', '--name', 'live']);
      const secret = created.stdout.trim();
      expect((await pub(secret)).status).toBe(200);
      const keys = JSON.parse((await cli(['keys', 'list', '--org', 'org_o', '--json'])).stdout) as { id: string; name: string | null }[];
      const live = keys.find((k) => k.name === 'live')!;
      expect((await cli(['keys', 'revoke', '--org', 'org_o', live.id])).stdout).toBe(`revoked ${secret.slice(0, 14)} (${live.id}) of org_o\n`);
      const revokedAt = Date.now();
      let status = 200;
      while (status !== 401 && Date.now() - revokedAt < 6_000) {
        status = (await pub(secret)).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(5_000);

      const added = await cli(['webhooks', 'add', '--org', 'org_o', '--url', 'https://example.com/hook', '--json']);
      expect(JSON.parse(added.stdout)).toMatchObject({
        id: expect.stringMatching(/^whe_/),
        url: 'https://example.com/hook',
        secret: expect.stringMatching(/^whsec_/),
      });
      expect(JSON.parse((await cli(['webhooks', 'list', '--org', 'org_o', '--json'])).stdout)).toHaveLength(1);

      expect((await cli(['pulses', 'moderate', '--org', 'org_o', 'p_1', 'FLAGGED'])).stdout).toBe('pulse p_1 of org_o: CLEAN -> FLAGGED\n');
      expect((await cli(['pulses', 'moderate', '--org', 'org_o', 'p_1', 'FLAGGED'])).stdout).toBe('pulse p_1 of org_o is already FLAGGED; nothing changed\n');
      expect((await cli(['alerts', 'mark-read', '--org', 'org_o', 'al_1'])).stdout).toMatch(
        /^alert al_1 of org_o read at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$/,
      );
      const alerts = await (await pub(LOOP_KEY, '/v1/alerts')).json();
      expect(alerts.items[0].readAt).toMatch(/Z$/);

      const rows = Array.from({ length: 2000 }, (_, i) => ({
        id: `imp_${i}`,
        level: 1 + (i % 5),
        reason: null,
        comment: null,
        moderationStatus: 'CLEAN',
        subteamId: i % 2 ? 't1' : null,
        createdAt: new Date(Date.parse('2026-10-01T00:00:00.000Z') + i * 60_000).toISOString(),
      }));
      writeFileSync(tmp('rows.ndjson'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      importing = true;
      const imported = await cli(['import-pulses', '--org', 'org_o', tmp('rows.ndjson')]);
      expect(JSON.parse(imported.stdout)).toMatchObject({ imported: 2000, skipped: 0, rows: 2000, aborted: false });
      const again = await runCliInProcess(['import-pulses', '--org', 'org_o', tmp('rows.ndjson')], cdb.env);
      importing = false;
      expect(again.code).toBe(1);
      expect(again.stderr.trim().split('\n').pop()).toMatch(
        /^climate-pulse: import aborted, nothing was written: a pulse with id "imp_\d+" already exists in organization "org_o"$/,
      );
      expect((await (await pub(LOOP_KEY, '/v1/stats')).json()).pulseCount).toBe(2001);

      expect(JSON.parse((await cli(['orgs', 'show', '--org', 'org_o', '--json'])).stdout)).toMatchObject({ id: 'org_o', plan: 'enterprise', deletedAt: null });
      expect(JSON.parse((await cli(['plans', 'set', 'gold', '--rest-api', 'yes', '--rate-limit', '1000', '--json'])).stdout)).toEqual({
        name: 'gold',
        restApi: true,
        rateLimitPerMinute: 1000,
        created: true,
      });

      // Every change above is in the organization's audit log, by the operator (over the socket: no address); the refused import is not.
      const audit = (await cli(['audit', '--org', 'org_o', '--json'])).stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { action: string; actor: { kind: string; label: string }; address: string | null });
      expect(audit.map((e) => e.action)).toEqual([
        'pulses.imported',
        'alert.read',
        'pulse.moderated',
        'pulse.moderated',
        'webhook_endpoint.created',
        'key.revoked',
        'key.created',
      ]);
      const address = TEST_DATABASE_URL ? '127.0.0.1' : null; // on PostgreSQL the CLI answers the request in-process
      expect(new Set(audit.map((e) => JSON.stringify([e.actor.kind, e.actor.label, e.address])))).toEqual(
        new Set([JSON.stringify(['operator', 'operator', address])]),
      );
    } finally {
      looping = false;
      await loop;
    }
    expect(statuses.length).toBeGreaterThan(10);
    expect(new Set(statuses.filter((s) => s !== 'busy'))).toEqual(new Set([200]));
  });

  it.skipIf(!!TEST_DATABASE_URL)('the socket and the data directory are owner-only; a second serve still stops with the lock message', async () => {
    if (cdb.kind !== 'pglite') return;
    expect(statSync(adminSocketPath(cdb.dir)).mode & 0o777).toBe(0o600);
    expect(statSync(cdb.dir).mode & 0o077).toBe(0);
    const second = await runCli(['serve'], { ...cdb.env, PORT: '0' });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/is in use by process \d+ \(climate-pulse serve/);
  });

  it('the operator API on ADMIN_PORT needs the token, and the token is never logged', async () => {
    const admin = `http://127.0.0.1:${adminPort}/admin/v1`;
    expect((await fetch(`${admin}/organizations/org_o`)).status).toBe(401);
    expect((await fetch(`${admin}/organizations/org_o`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    const ok = await fetch(`${admin}/organizations/org_o`, { headers: { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'admin-req-1' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('admin-req-1');
    // The token sent where it does not belong (the public port, a body) is not logged either.
    expect((await fetch(`${server.url}/v1/org`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    expect(
      (
        await fetch(`${admin}/organizations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: TOKEN.slice(0, 200), plan: 'nope' }),
        })
      ).status,
    ).toBe(400);
    await new Promise((r) => setTimeout(r, 300));
    const log = server.output();
    expect(log).toContain('admin-req-1'); // the request was logged, with its id
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(TOKEN.slice(0, 20));
  });
});
