import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { PgExecutor } from '../../src/db/pg.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createTestDatabase, TEST_CITUS_URL, TEST_DATABASE_URL, type TestDatabase } from '../helpers/db.js';
import { KEY_A, writesDataset } from '../http/writes/fixture.js';

/**
 * A PostgreSQL backend terminated in the middle of a write transaction. Only this file's own
 * backends are touched: they carry an application_name of their own, and a BEFORE INSERT trigger
 * in this file's schema holds the transaction open at the moment chosen by the test, waiting for
 * an advisory lock (the gate) that the test holds on the node that runs the write.
 *
 * On Citus that node is the worker holding the organization's shard, and the backend that runs
 * the write lives there: the test finds it through citus_stat_activity by the global pid of this
 * file's coordinator backend and terminates it by that global pid.
 */
describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL backend terminated mid-write', () => {
  const application = `cp-faults-${randomBytes(4).toString('hex')}`;
  const lockKey = randomBytes(6).readUIntBE(0, 6);
  let t: TestDatabase;
  let admin: pg.Client;
  let gate: pg.Client;
  let db: PgExecutor;
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, writesDataset());
    await t.db.exec(`
      CREATE FUNCTION fault_pause() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.title LIKE 'Cut %' THEN PERFORM pg_advisory_xact_lock_shared(${lockKey}); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fault_pause BEFORE INSERT ON actions FOR EACH ROW EXECUTE FUNCTION fault_pause();
    `);
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const node = new URL(TEST_DATABASE_URL!);
    if (TEST_CITUS_URL) {
      const [w] = await t.db.query<{ nodename: string; nodeport: number }>(
        {
          name: 'test.shard_node',
          text: `SELECT nodename, nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('actions', $1::text)`,
        },
        ['org_a'],
      );
      node.hostname = w.nodename;
      node.port = String(w.nodeport);
    }
    gate = new pg.Client({ connectionString: node.toString() });
    await gate.connect();
    db = new PgExecutor({ connectionString: t.url!, max: 4, application });
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' }), { db });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await admin?.end();
    await gate?.end();
    await t?.close();
  });

  const closeGate = () => gate.query('SELECT pg_advisory_lock($1)', [lockKey]);
  const openGate = () => gate.query('SELECT pg_advisory_unlock($1)', [lockKey]);

  const post = (idem: string, title: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/actions',
      headers: { authorization: `Bearer ${KEY_A}`, 'idempotency-key': idem },
      payload: { title },
    });

  /**
   * The backends that run our writes, as pg_stat_activity shows them; on Citus, the worker
   * backends serving our coordinator backends (same global pid). `target` is what
   * pg_terminate_backend takes: the pid, or on Citus the global pid.
   */
  const activity = TEST_CITUS_URL
    ? `SELECT pid, global_pid AS target, backend_xid IS NOT NULL AS has_xid FROM citus_stat_activity
        WHERE is_worker_query AND global_pid IN (SELECT global_pid FROM citus_stat_activity WHERE application_name = $1)`
    : `SELECT pid, pid AS target, backend_xid IS NOT NULL AS has_xid FROM pg_stat_activity WHERE application_name = $1`;
  async function backends(where: string): Promise<{ pid: number; target: string; has_xid: boolean }[]> {
    const { rows } = await admin.query(`${activity} AND ${where}`, [application]);
    return rows;
  }
  const terminate = (victim: { target: string }) =>
    admin.query(`SELECT pg_terminate_backend($1::${TEST_CITUS_URL ? 'bigint' : 'int'}) AS done`, [victim.target]);

  async function waitFor(where: string, n = 1) {
    for (let i = 0; i < 200; i++) {
      const rows = await backends(where);
      if (rows.length >= n) return rows;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no backend of ${application} where ${where}`);
  }

  const recordsFor = async (idem: string) =>
    (await t.db.query<{ n: number }>({ name: 'test.idem', text: 'SELECT count(*)::int AS n FROM idempotency_records WHERE idempotency_key = $1' }, [idem]))[0]
      .n;
  const actionsTitled = async (title: string) =>
    (await t.db.query<{ n: number }>({ name: 'test.titled', text: 'SELECT count(*)::int AS n FROM actions WHERE title = $1' }, [title]))[0].n;

  it('answers 503 service_unavailable, leaves nothing half-written, and the waiting retry with the same key creates the action once', async () => {
    const idem = 'terminated-key-01';
    const title = 'Cut mid-write';
    await closeGate();

    const cut = post(idem, title);
    // The transaction has claimed the key (it holds an xid) and waits at the gate in the trigger on the action's INSERT.
    const [victim] = await waitFor(`wait_event = 'advisory'`);
    expect(victim.has_xid).toBe(true);
    // A retry with the same key arrives meanwhile: it waits on the first transaction's claim.
    const retry = post(idem, title);
    await waitFor(`wait_event = 'transactionid'`);

    const { rows } = await terminate(victim);
    expect(rows[0].done).toBe(true);
    await openGate(); // for the retry, which now passes the trigger

    const res = await cut;
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: { code: 'service_unavailable', message: 'The service is temporarily unavailable; retry shortly.' } });
    expect(res.headers['retry-after']).toBe('5');

    // The waiting retry now claims the key for itself and creates the action: not a replay.
    const second = await retry;
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json()).toEqual({ id: expect.stringMatching(/^act_/) });

    const third = await post(idem, title);
    expect(third.statusCode).toBe(200);
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(third.body).toBe(second.body);
    expect(await recordsFor(idem)).toBe(1);
    expect(await actionsTitled(title)).toBe(1);
    expect((await backends(`pid = ${victim.pid}`)).length).toBe(0);
  });

  it('a terminated write with no retry waiting leaves no record and no action; the later retry succeeds once', async () => {
    const idem = 'terminated-key-02';
    const title = 'Cut and retried later';
    await closeGate();
    const cut = post(idem, title);
    const [victim] = await waitFor(`wait_event = 'advisory'`);
    expect((await terminate(victim)).rows[0].done).toBe(true);
    const res = await cut;
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('service_unavailable');
    expect(await recordsFor(idem)).toBe(0);
    expect(await actionsTitled(title)).toBe(0);

    await openGate();
    const retry = await post(idem, title);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(idem, title);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(retry.body);
    expect(await recordsFor(idem)).toBe(1);
    expect(await actionsTitled(title)).toBe(1);
    // The pool dropped the broken connection: reads go on.
    const org = await app.inject({ url: '/v1/org', headers: { authorization: `Bearer ${KEY_A}` } });
    expect(org.statusCode).toBe(200);
  });
});
