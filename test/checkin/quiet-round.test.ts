import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { participation, runRounds } from '../../src/domain/checkins/rounds.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { KEYS, readDataset } from '../fixtures/dataset.js';
import { createTestDatabase, DB_KIND, type TestDatabase } from '../helpers/db.js';
import { answer, linkToken, openAndIssue } from './helpers.js';

/**
 * Issue 51's proof: one quiet round, one respondent at a time, on this pass's engine. The attacker
 * holds everything the service keeps, taken after every answer: every table with each row's
 * `xmin` and `ctid`, the log lines in order, and GET /v1/pulses and the participation counts polled
 * with an API key. Their evidence for an answer is any row written, or log line printed, since the
 * answer before it that names a person (a respondent's id or address). The rule the round is built
 * on: no such event exists between the mails and the last answer, so every person of the pulse's
 * key is an equally good candidate for it, and matching does no better than chance.
 *
 * On the round as it was before issue 51 (a link row named its respondent and was marked issued
 * just before each answer), this test ties every answer: the evidence is that row.
 */
describe(`a quiet round against everything the service keeps (${DB_KIND})`, () => {
  let t: TestDatabase;
  let app: FastifyInstance;
  const logs: string[] = [];
  const ORG = 'org_acme';
  let now = new Date('2026-11-23T09:00:00.000Z');
  const people: { id: string; email: string; team: string }[] = [];
  const mails: { to: string; text: string }[] = [];

  type Row = Record<string, unknown> & { xmin: string; ctid: string };
  const snapshot = async (): Promise<Record<string, Row[]>> => {
    const names = await t.db.query<{ relname: string }>(
      sql(
        't.qr.tables',
        `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND relkind = 'r' ORDER BY 1`,
      ),
    );
    const out: Record<string, Row[]> = {};
    for (const { relname } of names) {
      out[relname] = await t.db.query<Row>(sql(`t.qr.dump.${relname}`, `SELECT xmin::text AS xmin, ctid::text AS ctid, * FROM "${relname}"`));
    }
    return out;
  };
  const text = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? Buffer.from(x).toString('hex') : x));
  const names = (s: string) => people.filter((p) => s.includes(p.id) || s.includes(p.email)).map((p) => p.email);
  // The transaction counter of the node that holds the organization's rows, which their xmin counts
  // in: on Citus a worker's own (a query routed to the shard takes it there), not the coordinator's,
  // whose count is unrelated (read there, every row of the round's start looked newer than the mails).
  const txid = async () =>
    Number((await t.db.query<{ x: string }>(sql('t.qr.txid', 'SELECT txid_current()::text AS x FROM respondents WHERE org_id = $1 LIMIT 1'), [ORG]))[0]!.x) %
    2 ** 32;

  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, readDataset());
    const stream = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ LOG_LEVEL: 'debug', MAX_EVENT_LOOP_DELAY_MS: '0', TRUST_PROXY: '127.0.0.1' });
    app = await buildApp(config, { db: t.db, now: () => now, logger: { level: 'debug', stream } });
    const long = new Date('2026-09-01T00:00:00.000Z');
    for (const [team, n] of [
      ['Web', 7],
      ['Night shift', 5],
    ] as const) {
      for (let i = 1; i <= n; i++) {
        const email = `${team.replace(' ', '').toLowerCase()}${i}@acme.test`;
        people.push({ id: (await createRespondent(t.db, ORG, { email, team }, operatorActor(), long)).id, email, team });
      }
    }
    await runRounds(t.db, { linkFor: (o, tok) => `http://h/checkin/o/${o}#${tok}`, send: async (m) => void mails.push(m) }, now);
    expect(mails).toHaveLength(12);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('no row, log line or poll between the mails and the last answer names a person: every answer stands among its key', async () => {
    const afterMails = await txid();
    const logsAfterMails = logs.length;
    // The order of answers: a fixed shuffle, each respondent alone, an hour apart.
    const order = [3, 9, 0, 11, 5, 7, 1, 10, 2, 6, 8, 4].map((i) => people[i]!);
    const seen = new Set<string>();
    const evidence: { who: string; named: string[] }[] = [];
    let lastXmin = afterMails;
    let lastLog = logsAfterMails;
    for (const person of order) {
      now = new Date(now.getTime() + 3_600_000);
      const link = linkToken(mails.find((m) => m.to === person.email)!.text)!;
      const token = await openAndIssue(app, ORG, link);
      expect((await answer(app, ORG, token, { level: 3, comment: `quiet ${person.email.length}` })).statusCode).toBe(200);
      // The attacker's polls: the new pulse in the API, the participation counts, then every table.
      const pulses = (
        await app.inject({
          method: 'GET',
          url: '/v1/pulses?from=2026-11-23T00:00:00.000Z&to=2026-11-30T00:00:00.000Z&limit=200',
          headers: { authorization: `Bearer ${KEYS.acme}` },
        })
      ).json().items as { id: string }[];
      const fresh = pulses.filter((p) => !seen.has(p.id));
      expect(fresh).toHaveLength(1);
      seen.add(fresh[0]!.id);
      const counts = text(await participation(t.db, ORG, now));
      const tables = await snapshot();
      const pulseRow = tables.pulses!.find((p) => p.id === fresh[0]!.id)!;
      const pulseXmin = Number(pulseRow.xmin);
      // Everything written since the answer before, up to this one's commit, that names a person.
      const named = new Set<string>(names(counts));
      for (const [table, rows] of Object.entries(tables)) {
        for (const row of rows) {
          const x = Number(row.xmin);
          if (x > lastXmin && x <= pulseXmin) for (const who of names(text(row))) named.add(`${table}:${who}`);
        }
      }
      for (const line of logs.slice(lastLog)) for (const who of names(line)) named.add(`log:${who}`);
      evidence.push({ who: person.email, named: [...named] });
      lastXmin = pulseXmin;
      lastLog = logs.length;
    }
    expect(evidence).toEqual(order.map((p) => ({ who: p.email, named: [] })));
    // The check-in routes did log (the search can find a line): 3 lines per answer at least.
    expect(logs.slice(logsAfterMails).filter((l) => l.includes('"route":"/checkin/')).length).toBeGreaterThanOrEqual(36);
  });

  it('what stays in the tables ties no link to a person: the rows that name people hold no link, and the links name no one', async () => {
    const tables = await snapshot();
    const hashes = new Set(tables.checkin_round_links!.map((l) => text(l.token_hash)));
    expect(hashes.size).toBe(12);
    const tying: string[] = [];
    for (const [table, rows] of Object.entries(tables)) {
      for (const row of rows) {
        const s = text(row);
        if (names(s).length > 0 && [...hashes].some((h) => s.includes(h.replace(/"/g, '')))) tying.push(table);
      }
    }
    expect(tying).toEqual([]);
    // No mail waits with a link (only the reminders, which carry none).
    expect(tables.checkin_outbox!.filter((o) => o.token_sealed !== null)).toEqual([]);
    // Each person's place in the round is the same but for their id: their key slot.
    const places = tables.checkin_round_members!.map(({ respondent_id: _r, xmin: _x, ctid: _c, ...rest }) => text(rest));
    expect(new Set(places).size).toBe(2); // Web's slot and Night shift's
  });
});
