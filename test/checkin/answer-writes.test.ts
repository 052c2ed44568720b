import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataset } from '../fixtures/dataset.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { sql } from '../../src/db/executor.js';
import type { DatabaseExecutor } from '../../src/domain/database.js';
import { operatorActor } from '../../src/domain/audit.js';
import { AnswerWrites, type SpentAnswer } from '../../src/domain/checkins/answers.js';
import { CheckinKeys } from '../../src/domain/checkins/keys.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { newId } from '../../src/domain/ids.js';
import { answer, linkToken, openAndIssue, type ClientToken } from './helpers.js';

/**
 * Answers that arrive together are written together (src/domain/checkins/answers.ts, AnswerWrites):
 * each still spends its own token once, and one answer's failure stays its own.
 */
describe('answers written together', () => {
  let t: TestApp;
  const ORG = 'org_acme';
  const now = new Date('2026-11-23T09:30:00.000Z');
  const mails: { to: string; text: string }[] = [];
  // Each statement its own name: PostgreSQL prepares a named statement once per connection.
  const count = async (q: string) => Number((await t.db.query<{ n: string }>(sql(`test.count ${q}`, q), [ORG]))[0]!.n);

  beforeAll(async () => {
    t = await createTestApp({ dataset: readDataset(), clock: () => now });
    for (let i = 1; i <= 12; i++) await createRespondent(t.db, ORG, { email: `p${i}@acme.test`, team: 'Web' }, operatorActor(), now);
    expect((await runRounds(t.db, { linkFor: (o, tok) => `http://h/checkin/o/${o}#${tok}`, send: async (m) => void mails.push(m) }, now)).mailed).toBe(12);
  });
  afterAll(async () => t?.close());

  it('twelve answers and two re-sent tokens at once: twelve 200, two 409, twelve pulses, twelve tokens spent', async () => {
    const tokens: ClientToken[] = [];
    for (const m of mails) tokens.push(await openAndIssue(t.app, ORG, linkToken(m.text)!));
    const pulsesBefore = await count(`SELECT count(*) AS n FROM pulses WHERE org_id = $1`);
    const sends = [...tokens, tokens[0]!, tokens[5]!].map((tok, i) => answer(t.app, ORG, tok, { level: 1 + (i % 5) }));
    const statuses = (await Promise.all(sends)).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(12);
    expect(statuses.filter((s) => s === 409)).toHaveLength(2);
    expect(await count(`SELECT count(*) AS n FROM pulses WHERE org_id = $1`)).toBe(pulsesBefore + 12);
    expect(await count(`SELECT count(*) AS n FROM checkin_spent WHERE org_id = $1`)).toBe(12);
    // The rollups hold them as the pulses do (the pulse door folded the batch).
    expect(await count(`SELECT pulse_count AS n FROM pulse_totals WHERE org_id = $1`)).toBe(pulsesBefore + 12);
  });

  it('groups the answers that wait, and a failing answer in a group fails alone', async () => {
    let transactions = 0;
    // The test's own database, its transactions counted.
    const counting: DatabaseExecutor = {
      kind: t.db.kind,
      query: (q, params) => t.db.query(q, params),
      exec: (text) => t.db.exec(text),
      close: async () => {},
      transaction(fn) {
        transactions++;
        return t.db.transaction(fn);
      },
    };
    const key = await new CheckinKeys('answer writes test').keyFor(t.db, ORG, '2026-11-23', 'team_web');
    // Room for more answers than the team's twelve (a key takes no more answers than its capacity: the next test).
    await t.db.query(sql('t.room', `UPDATE checkin_round_slots SET capacity = 100 WHERE org_id = $1 AND team_slot = 'team_web'`), [ORG]);
    const spent = (team: string | null): SpentAnswer => ({
      orgId: ORG,
      keyId: key.id,
      week: '2026-11-23',
      slot: 'team_web',
      hashHex: createHash('sha256').update(randomBytes(32)).digest('hex'),
      pulse: { id: newId('pls'), level: 3, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: team, createdAt: '2026-11-23T09:00:00.000Z' },
    });
    const writes = new AnswerWrites(counting);
    const answers = Array.from({ length: 20 }, () => spent('team_web'));
    const again = answers[3]!;
    const outcomes = await Promise.all([...answers, again].map((a) => writes.write(a)));
    expect(outcomes).toEqual([...answers.map(() => 'written'), 'spent']);
    // The first alone (nothing was running), the other twenty in one more.
    expect(transactions).toBe(2);

    // A team that does not exist fails the shared transaction: each answer is then tried alone.
    transactions = 0;
    const good = [spent('team_web'), spent('team_web')];
    const results = await Promise.allSettled([good[0]!, spent('team_nope'), good[1]!].map((a) => writes.write(a)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[0] as PromiseFulfilledResult<string>).value).toBe('written');
    expect((results[2] as PromiseFulfilledResult<string>).value).toBe('written');
    const ids = good.map((g) => g.pulse.id);
    expect(
      (await t.db.query<{ id: string }>(sql('test.ids', 'SELECT id FROM pulses WHERE org_id = $1 AND id = ANY($2::text[]) ORDER BY id'), [ORG, ids])).map(
        (r) => r.id,
      ),
    ).toEqual([...ids].sort());
  });

  it('a key takes no more answers than the people it was made for: past its capacity, 409 and nothing written', async () => {
    const key = await new CheckinKeys('answer writes test').keyFor(t.db, ORG, '2026-11-23', 'team_web');
    const [{ answered }] = await t.db.query<{ answered: number }>(
      sql('t.answered', `SELECT answered FROM checkin_round_slots WHERE org_id = $1 AND team_slot = 'team_web'`),
      [ORG],
    );
    await t.db.query(sql('t.full', `UPDATE checkin_round_slots SET capacity = $2 WHERE org_id = $1 AND team_slot = 'team_web'`), [ORG, answered + 1]);
    const one = (): SpentAnswer => ({
      orgId: ORG,
      keyId: key.id,
      week: '2026-11-23',
      slot: 'team_web',
      hashHex: createHash('sha256').update(randomBytes(32)).digest('hex'),
      pulse: {
        id: newId('pls'),
        level: 2,
        reason: null,
        comment: null,
        moderationStatus: 'CLEAN',
        subteamId: 'team_web',
        createdAt: '2026-11-23T09:00:00.000Z',
      },
    });
    const pair = [one(), one()];
    const writes = new AnswerWrites(t.db);
    expect((await Promise.all(pair.map((a) => writes.write(a)))).sort()).toEqual(['full', 'written']);
    const ids = pair.map((a) => a.pulse.id);
    expect((await t.db.query(sql('t.full_ids', 'SELECT id FROM pulses WHERE org_id = $1 AND id = ANY($2::text[])'), [ORG, ids])).length).toBe(1);
    expect(
      (
        await t.db.query(sql('t.full_spent', "SELECT 1 AS x FROM checkin_spent WHERE org_id = $1 AND encode(token_hash, 'hex') = ANY($2::text[])"), [
          ORG,
          pair.map((a) => a.hashHex),
        ])
      ).length,
    ).toBe(1);
  });
});
