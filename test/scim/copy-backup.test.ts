import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { unpackBackup } from '../../src/db/backup.js';
import { copyDatabase } from '../../src/db/copy.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { operatorActor } from '../../src/domain/audit.js';
import { replaceRoster } from '../../src/domain/checkins/roster.js';
import { backupDatabase } from '../../src/domain/backup.js';
import { createOrganization } from '../../src/domain/orgs.js';
import { createScimToken, setScimTeamFrom } from '../../src/domain/scim.js';
import { EMBEDDED_RAN } from '../helpers/db.js';
import { ENTERPRISE, GROUP, newUser, PATCH_OP, USER } from './helpers.js';

/**
 * What SCIM keeps moves with `db copy` and with a backup restored (issue 56): the token still
 * opens /scim/v2, the users SCIM turned off are still read (and turned on under the same id), the
 * people's sources, the groups' externalIds and the team mapping are as they were.
 */
const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const ORG = 'org_scim_move';
const now = new Date('2026-11-25T10:00:00.000Z');
const ENV = { LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' };

async function served(db: DatabaseExecutor): Promise<FastifyInstance> {
  return buildApp(loadConfig(ENV), { db, now: () => now });
}

describe.skipIf(EMBEDDED_RAN && !PG_URL)('SCIM moves with db copy and backup', () => {
  let dir: string;
  let source: PgliteExecutor;
  let token: string;
  let offId: string;
  let before: string;

  const call = (app: FastifyInstance, method: string, path: string, body?: unknown) =>
    app.inject({
      method: method as 'GET',
      url: `/scim/v2${path}`,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/scim+json' } : {}) },
      payload: body ? JSON.stringify(body) : undefined,
    });
  const everything = async (app: FastifyInstance) => JSON.stringify([(await call(app, 'GET', '/Users')).json(), (await call(app, 'GET', '/Groups')).json()]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-scim-move-'));
    source = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(source);
    await createOrganization(source, { id: ORG, name: 'Moved', plan: 'business' }, operatorActor(), now);
    token = (await createScimToken(source, ORG, { name: 'Entra ID' }, operatorActor(), now)).token;
    await replaceRoster(source, ORG, 'email,team\nfile@move.test,Ops\n', operatorActor(), now);
    const app = await served(source);
    try {
      const on = (await call(app, 'POST', '/Users', newUser('on@move.test', { externalId: 'e-on' }))).json().id as string;
      offId = (await call(app, 'POST', '/Users', newUser('off@move.test'))).json().id as string;
      await call(app, 'POST', '/Groups', { schemas: [GROUP], displayName: 'Web', externalId: 'g-web', members: [{ value: on }, { value: offId }] });
      await call(app, 'PATCH', `/Users/${offId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] });
      await setScimTeamFrom(source, ORG, 'department', operatorActor(), now);
      before = await everything(app);
    } finally {
      await app.close();
    }
    expect(before).toContain(ENTERPRISE);
  }, 120_000);

  afterAll(async () => {
    await source?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const same = async (db: DatabaseExecutor) => {
    const app = await served(db);
    try {
      expect(await everything(app)).toBe(before);
      const back = await call(app, 'PATCH', `/Users/${offId}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: true }] });
      expect(back.statusCode).toBe(200);
      expect(back.json()).toMatchObject({ id: offId, active: true, [ENTERPRISE]: { department: 'Web' }, schemas: [USER, ENTERPRISE] });
    } finally {
      await app.close();
    }
  };

  it.skipIf(EMBEDDED_RAN)('a backup restored serves the same SCIM answers, and the token still works', async () => {
    const file = join(dir, 'backup.tar.gz');
    const out = createWriteStream(file);
    await backupDatabase(source, out, { releaseDelayHours: 24, now });
    await finished(out);
    const restoredDir = join(dir, 'restored');
    await unpackBackup(file, restoredDir);
    const restored = await PgliteExecutor.open(restoredDir);
    try {
      await same(restored);
    } finally {
      await restored.close();
    }
  });

  it.skipIf(!PG_URL)('db copy to PostgreSQL: the same, on the copy', async () => {
    const schema = `scim_copy_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const target = new PgExecutor({ connectionString: url.toString(), max: 4 });
    try {
      await migrate(target);
      await copyDatabase(source, target);
      await same(target);
    } finally {
      await target.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
