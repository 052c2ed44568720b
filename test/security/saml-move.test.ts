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
import { configureSamlIdp, consumeSamlResponse, getSamlSettings, spMetadataXml, startSamlSignIn, type SamlSignInResult } from '../../src/domain/sso/saml.js';
import { EMBEDDED_RAN } from '../helpers/db.js';
import { runSamlChild, startSamlIdp, type TestIdp } from '../helpers/saml-idp.js';

/**
 * SAML moves with the database (issue 55, item 6): `db copy`, a backup and its restore carry the
 * organization's SAML settings, its sealed SP key (it opens under the moved service secret
 * saml_seal: same certificate, requests still signed), the requests outstanding and the assertions
 * seen. An assertion accepted before the move is refused after it on the copy (replayed), a request
 * sent before the move is answered after it, and a new sign-in works. And the embedded database's
 * second process: a child process opening the same data directory after this one closed it refuses
 * the replay (the embedded database serves one process at a time; PostgreSQL's second process, in
 * parallel, is in saml.test.ts).
 */
const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const OPERATOR = operatorActor('203.0.113.9');
const ORG = 'org_saml_move';
const BASE = 'https://pulse.example';

const refusal = (r: SamlSignInResult) => (r.ok ? 'accepted' : r.refusal);

describe('SAML moves with db copy, backup and restore', () => {
  let dir: string;
  let source: PgliteExecutor;
  let idp: TestIdp;
  let accepted: string; // a response accepted on the source
  let pending: string; // a response to a request sent on the source, not yet posted
  let certificate: string;

  async function signIn(db: DatabaseExecutor): Promise<string> {
    const started = await startSamlSignIn(db, ORG, BASE);
    return idp.response({ inResponseTo: (await idp.readAuthnRequest(started.redirectUrl)).id });
  }

  /** On a moved database: the replay refused, the pending request answered, a new sign-in accepted, the same SP key. */
  async function checkMoved(db: DatabaseExecutor) {
    expect((await getSamlSettings(db, ORG, BASE))?.spCertificate).toBe(certificate);
    expect((await getSamlSettings(db, ORG, BASE))?.idp?.entityId).toBe(idp.entityId);
    expect(refusal(await consumeSamlResponse(db, ORG, BASE, { samlResponse: accepted }))).toBe('replayed');
    expect(refusal(await consumeSamlResponse(db, ORG, BASE, { samlResponse: pending }))).toBe('accepted');
    expect(refusal(await consumeSamlResponse(db, ORG, BASE, { samlResponse: await signIn(db) }))).toBe('accepted');
    const [n] = await db.query<{ seen: number; requests: number }>(
      sql(
        't.saml.counts',
        `SELECT (SELECT count(*)::int FROM saml_assertions_seen WHERE org_id = $1) AS seen, (SELECT count(*)::int FROM saml_requests WHERE org_id = $1) AS requests`,
      ),
      [ORG],
    );
    expect(n).toEqual({ seen: 3, requests: 3 });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-saml-move-'));
    source = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(source);
    await createOrganization(source, { id: ORG, name: 'Moving Co', plan: 'business' }, operatorActor(), new Date());
    idp = startSamlIdp();
    await idp.listen();
    idp.trust(await spMetadataXml(source, ORG, BASE));
    await configureSamlIdp(source, ORG, { metadataXml: idp.metadataXml(), groupsAttribute: 'roles' }, OPERATOR, { baseUrl: BASE, allowPrivate: true });
    certificate = (await getSamlSettings(source, ORG, BASE))!.spCertificate;
    accepted = await signIn(source);
    expect(refusal(await consumeSamlResponse(source, ORG, BASE, { samlResponse: accepted }))).toBe('accepted');
    pending = await signIn(source);
  }, 60_000);

  afterAll(async () => {
    await idp?.close();
    await source?.close().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(EMBEDDED_RAN)('a backup restored elsewhere', async () => {
    const file = join(dir, 'backup.tar.gz');
    const out = createWriteStream(file);
    await source.backup!(out);
    await finished(out);
    const restoredDir = join(dir, 'restored');
    await unpackBackup(file, restoredDir);
    const restored = await PgliteExecutor.open(restoredDir);
    try {
      await checkMoved(restored);
      const [row] = await restored.query<{ groups: string }>(sql('t.saml.attr', `SELECT groups_attribute AS groups FROM saml_providers WHERE org_id = $1`), [
        ORG,
      ]);
      expect(row.groups).toBe('roles');
    } finally {
      await restored.close();
    }
  });

  it.skipIf(!PG_URL)('db copy to PostgreSQL', async () => {
    const schema = `saml_copy_${randomBytes(6).toString('hex')}`;
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
      expect({ providers: rows.saml_providers, requests: rows.saml_requests, seen: rows.saml_assertions_seen }).toEqual({ providers: 1, requests: 2, seen: 1 });
      await checkMoved(target);
    } finally {
      await target.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it.skipIf(EMBEDDED_RAN)('a second process on the embedded database refuses the replay', async () => {
    await source.close();
    expect(await runSamlChild({ DATA_DIR: join(dir, 'data') }, ORG, BASE, accepted)).toMatchObject({ ok: false, refusal: 'replayed' });
  });
});
