/**
 * Issue 55: passkeys, their one-time challenges, the requirement and the secret their challenges are
 * made under move with `db copy` and with a backup restored. On the copy, the passkey registered
 * before signs in; an answer used before the move is refused (its challenge moved, used), and a
 * clone's counter is still behind the moved one.
 */
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
import { operatorActor } from '../../src/domain/audit.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { updateRequirePasskeys } from '../../src/domain/passkeys.js';
import { readDataset } from '../fixtures/dataset.js';
import { CONSOLE_PASSWORD, ConsoleClient, joinConsole } from '../helpers/console-client.js';
import { EMBEDDED_RAN } from '../helpers/db.js';
import { optionsOn, SoftAuthenticator } from './passkeys-authenticator.js';

const PG_URL = process.env.TEST_DATABASE_URL || undefined;
const ORIGIN = 'http://localhost:3000';
const ORG = 'org_acme';
const now = new Date('2026-11-23T09:30:00.000Z');

const served = (db: DatabaseExecutor): Promise<FastifyInstance> =>
  buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', PUBLIC_BASE_URL: ORIGIN }), { db, now: () => now });

const state = (db: DatabaseExecutor) =>
  Promise.all([
    db.query<{ name: string; sign_count: string | number; n: number }>(
      sql('t.pk', `SELECT name, sign_count, octet_length(public_key) AS n FROM member_passkeys WHERE org_id = $1 ORDER BY name`),
      [ORG],
    ),
    db.query<{ n: number }>(sql('t.ch', `SELECT count(*)::int AS n FROM webauthn_challenges`)),
    db.query<{ require_passkeys: boolean }>(sql('t.req', `SELECT require_passkeys FROM organizations WHERE id = $1`), [ORG]),
  ]).then(([passkeys, [challenges], [org]]) => ({
    passkeys: passkeys.map((p) => ({ name: p.name, signCount: Number(p.sign_count), keyBytes: p.n })),
    challenges: challenges.n,
    required: org.require_passkeys,
  }));

/** Signs in with the passkey alone on `app`: the answer's status, and the answer (to post again). */
async function signIn(app: FastifyInstance, device: SoftAuthenticator, opts: { counter?: number; answer?: string; token?: string } = {}) {
  const c = new ConsoleClient(app, '198.51.100.60');
  c.followChanges = false;
  const page = (await c.get('/console/sign-in')).body;
  const answer = opts.answer ?? device.authenticate(optionsOn(page, '/console/sign-in/passkey'), { counter: opts.counter });
  const res = await c.postOnly('/console/sign-in/passkey', { _csrf: ConsoleClient.token(page), response: answer });
  return { status: res.statusCode, answer };
}

describe('passkeys move with db copy and backup', () => {
  let dir: string;
  let source: PgliteExecutor;
  let app: FastifyInstance;
  const device = new SoftAuthenticator(ORIGIN);
  let usedAnswer: string;
  let before: Awaited<ReturnType<typeof state>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-passkeys-move-'));
    source = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(source);
    await loadDataset(source, readDataset());
    app = await served(source);
    const c = await joinConsole({ app, db: source }, ORG, 'pk.moves@example.com', 'owner', now);
    c.followChanges = false;
    const account = (await c.get('/console/account')).body;
    expect((await c.postOnly('/console/account/passkeys', { _csrf: ConsoleClient.token(account), name: 'Moves', password: CONSOLE_PASSWORD })).statusCode).toBe(
      303,
    );
    const page = (await c.get('/console/account')).body;
    const done = await c.postOnly('/console/account/passkeys/new', {
      _csrf: ConsoleClient.token(page),
      name: 'Moves',
      response: device.register(optionsOn(page, '/console/account/passkeys/new')),
    });
    expect(done.statusCode).toBe(303);
    await updateRequirePasskeys(source, ORG, true, operatorActor('192.0.2.1'), now);
    const first = await signIn(app, device);
    expect(first.status).toBe(303);
    usedAnswer = first.answer;
    before = await state(source);
    expect(before).toEqual({ passkeys: [{ name: 'Moves', signCount: 1, keyBytes: 77 }], challenges: 2, required: true });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await source?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** On a moved copy: the same rows; the used answer refused, a clone refused, the passkey signs in. */
  async function provesOn(db: DatabaseExecutor) {
    expect(await state(db)).toEqual(before);
    const other = await served(db);
    try {
      expect((await signIn(other, device, { answer: usedAnswer })).status).toBe(401);
      expect((await signIn(other, device, { counter: 1 })).status).toBe(401);
      expect((await signIn(other, device, { counter: 5 })).status).toBe(303);
    } finally {
      await other.close();
    }
  }

  // The backup is of the embedded database: the same on either pass, so run once (pass 1).
  it.skipIf(EMBEDDED_RAN)('a backup restored elsewhere holds the passkey, its counter, the used challenges and the requirement', async () => {
    const file = join(dir, 'backup.tar.gz');
    const out = createWriteStream(file);
    await source.backup!(out);
    await finished(out);
    const restoredDir = join(dir, 'restored');
    await unpackBackup(file, restoredDir);
    const restored = await PgliteExecutor.open(restoredDir);
    try {
      await provesOn(restored);
    } finally {
      await restored.close();
    }
  });

  it.skipIf(!PG_URL)('db copy to PostgreSQL: the same, on the copy', async () => {
    const schema = `passkeys_copy_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const target = new PgExecutor({ connectionString: url.toString(), max: 4 });
    try {
      await migrate(target);
      await copyDatabase(source, target);
      await provesOn(target);
    } finally {
      await target.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
