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
import { sql, type DatabaseExecutor } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgExecutor } from '../../src/db/pg.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { readDataset } from '../fixtures/dataset.js';
import { answer, linkToken, openAndIssue } from './helpers.js';

/**
 * The check-ins' tables, their sealed keys and the secret that seals them move with `db copy` and
 * with a backup restored: a token issued before the move is answered after it, and the moved keys
 * still sign (they unseal under the moved secret); a link mailed before the move still opens.
 */
const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const ORG = 'org_acme';
const now = new Date('2026-11-23T09:30:00.000Z');
const ENV = { LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' };

async function served(db: DatabaseExecutor): Promise<FastifyInstance> {
  return buildApp(loadConfig(ENV), { db, now: () => now });
}

describe('check-ins move with db copy and backup', () => {
  let dir: string;
  let source: PgliteExecutor;
  let app: FastifyInstance;
  const links: string[] = [];
  let early: Awaited<ReturnType<typeof openAndIssue>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-checkin-move-'));
    source = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(source);
    await loadDataset(source, readDataset());
    for (let i = 1; i <= 6; i++) await createRespondent(source, ORG, { email: `web${i}@acme.test`, team: 'Web' }, operatorActor(), now);
    const mails: string[] = [];
    await runRounds(source, { linkFor: (o, t) => `http://x/checkin/o/${o}#${t}`, send: async (m) => void mails.push(m.text) }, now);
    links.push(...mails.map((m) => linkToken(m)!));
    app = await served(source);
    early = await openAndIssue(app, ORG, links[0]); // issued before the move, answered after it
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await source?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a backup restored elsewhere answers the early token, opens the mailed links and signs with the moved keys', async () => {
    const file = join(dir, 'backup.tar.gz');
    const out = createWriteStream(file);
    await source.backup!(out);
    await finished(out);
    const restoredDir = join(dir, 'restored');
    await unpackBackup(file, restoredDir);
    const restored = await PgliteExecutor.open(restoredDir);
    const other = await served(restored);
    try {
      expect((await answer(other, ORG, early, { level: 4 })).statusCode).toBe(200);
      expect((await answer(other, ORG, early, { level: 4 })).statusCode).toBe(409);
      const later = await openAndIssue(other, ORG, links[1]);
      expect(later.keyId).toBe(early.keyId);
      expect((await answer(other, ORG, later, { level: 2 })).statusCode).toBe(200);
      const [{ n }] = await restored.query<{ n: number }>(sql('t.pulses', `SELECT count(*)::int AS n FROM pulses WHERE org_id = $1 AND created_at = $2`), [
        ORG,
        '2026-11-23T09:00:00.000Z',
      ]);
      expect(n).toBe(2);
    } finally {
      await other.close();
      await restored.close();
    }
  });

  it.skipIf(!PG_URL)('db copy to PostgreSQL: the same, on the copy', async () => {
    const schema = `checkin_copy_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const target = new PgExecutor({ connectionString: url.toString(), max: 4 });
    try {
      await migrate(target);
      await copyDatabase(source, target);
      const [k] = await target.query<{ n: number }>(sql('t.keys', `SELECT count(*)::int AS n FROM checkin_keys WHERE org_id = $1`), [ORG]);
      expect(k.n).toBe(1);
      const copied = await served(target);
      try {
        expect((await answer(copied, ORG, early, { level: 5 })).statusCode).toBe(200);
        const later = await openAndIssue(copied, ORG, links[2]);
        expect(later.keyId).toBe(early.keyId);
        expect((await answer(copied, ORG, later, { level: 3 })).statusCode).toBe(200);
      } finally {
        await copied.close();
      }
    } finally {
      await target.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
