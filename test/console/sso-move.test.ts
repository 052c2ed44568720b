import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackBackup } from '../../src/db/backup.js';
import { copyDatabase } from '../../src/db/copy.js';
import { sql, type DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { finishOidcSignIn, startOidcSignIn } from '../../src/domain/sso/oidc.js';
import { addDomain, saveOidcSettings, ssoRouteForEmail, verifyDomain } from '../../src/domain/sso/settings.js';
import { EMBEDDED_RAN } from '../helpers/db.js';
import { startIdp, type TestIdp } from '../helpers/oidc-idp.js';

/**
 * Single sign-on moves with the database (issue 55, item 6): `db copy` and a backup with its
 * restore carry the settings (the client secret sealed under the moved service secret sso_seal
 * opens on the copy), the verified domains and a sign-in under way: begun on the source, it
 * finishes on the copy, once.
 */
const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const OP = operatorActor('203.0.113.9');
const ORG = 'org_sso_move';
const BASE = 'https://pulse.example';
const RULES = { allowPrivate: true };

describe('single sign-on moves with db copy, backup and restore', () => {
  let dir: string;
  let source: PgliteExecutor;
  let idp: TestIdp;
  const pending: Array<{ query: string; cookie: string }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-sso-move-'));
    source = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(source);
    await createOrganization(source, { id: ORG, name: 'Moving Co', plan: 'business' }, OP, new Date());
    idp = await startIdp({
      clients: [{ clientId: 'mover', clientSecret: 'mover-secret-0123456789', redirectUri: `${BASE}/console/sso/${ORG}/oidc/callback` }],
    });
    idp.users.set('u-kim', { email: 'kim@moving.example.com', groups: ['all'] });
    await saveOidcSettings(
      source,
      ORG,
      { issuer: idp.issuer, clientId: 'mover', clientSecret: 'mover-secret-0123456789', groupRoles: 'all = viewer' },
      OP,
      new Date(),
      RULES,
    );
    await addDomain(source, ORG, 'moving.example.com', OP, new Date());
    await verifyDomain(source, ORG, 'moving.example.com', 'operator', OP, new Date());
    idp.nextUser = 'u-kim';
    for (let i = 0; i < 2; i++) {
      const started = await startOidcSignIn(source, ORG, { baseUrl: BASE, rules: RULES, now: new Date() });
      pending.push({ query: (await idp.authorize(started.authorizationUrl)).search.slice(1), cookie: started.browserCookie });
    }
  }, 60_000);

  afterAll(async () => {
    await idp?.close();
    await source?.close().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function checkMoved(db: DatabaseExecutor, p: { query: string; cookie: string }) {
    expect(await ssoRouteForEmail(db, 'Kim@Moving.Example.com')).toEqual({ orgId: ORG, kind: 'oidc', email: 'kim@moving.example.com' });
    const finish = () =>
      finishOidcSignIn(db, ORG, { baseUrl: BASE, query: p.query, browserCookie: p.cookie, address: '192.0.2.1', rules: RULES, now: new Date() });
    const s = await finish();
    expect(s.member).toMatchObject({ email: 'kim@moving.example.com', role: 'viewer' });
    await expect(finish()).rejects.toMatchObject({ reason: 'unknown_state' });
    const [n] = await db.query<{ sessions: number }>(
      sql('t.sso.move', `SELECT count(*)::int AS sessions FROM console_sessions WHERE org_id = $1 AND sso_protocol = 'oidc'`),
      [ORG],
    );
    expect(n.sessions).toBe(1);
  }

  it.skipIf(EMBEDDED_RAN)('a backup restored elsewhere', async () => {
    const file = join(dir, 'backup.tar.gz');
    const out = createWriteStream(file);
    await source.backup!(out);
    await finished(out);
    const restoredDir = join(dir, 'restored');
    await unpackBackup(file, restoredDir);
    const restored = await PgliteExecutor.open(restoredDir);
    try {
      await checkMoved(restored, pending[0]);
    } finally {
      await restored.close();
    }
  });

  it.skipIf(!PG_URL)('db copy to PostgreSQL', async () => {
    const schema = `sso_copy_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const target = new PgExecutor({ connectionString: url.toString(), max: 4 });
    try {
      await migrate(target);
      const outcome = await copyDatabase(source, target);
      const rows = Object.fromEntries(outcome.tables.map((t) => [t.table, t.rows]));
      expect({ settings: rows.sso_settings, domains: rows.sso_domains, signIns: rows.sso_sign_ins }).toEqual({ settings: 1, domains: 1, signIns: 2 });
      await checkMoved(target, pending[1]);
    } finally {
      await target.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
