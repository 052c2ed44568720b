import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { RSABSSA } from '@cloudflare/blindrsa-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { sql } from '../../src/db/executor.js';
import { migrate } from '../../src/db/migrate.js';
import { PgliteExecutor } from '../../src/db/pglite.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { runRounds } from '../../src/domain/checkins/rounds.js';
import { readDataset } from '../fixtures/dataset.js';
import { linkToken } from './helpers.js';

/**
 * CONTRACT.md section 12, "Proof": everything the service keeps and writes after a round (every
 * table, a backup of the embedded database, its log lines) holds no value that ties a pulse to a
 * respondent. Each of 6 respondents answers from its own address and agent; the test knows every
 * secret of the exchange (link tokens, blinded messages, messages, signatures) and looks for each,
 * in text, hex and base64url, in everything the service kept.
 */
describe('unlinkability of check-in answers', () => {
  let dir: string;
  let db: PgliteExecutor;
  let app: FastifyInstance;
  const logs: string[] = [];
  const now = new Date('2026-11-23T09:30:00.000Z');
  const ORG = 'org_acme';
  const secrets: { who: string; values: string[]; raw: Uint8Array[] }[] = [];
  let backup: Buffer;
  let tables: Record<string, Record<string, unknown>[]>;

  const forms = (b: Uint8Array) => [Buffer.from(b).toString('hex'), Buffer.from(b).toString('base64url'), Buffer.from(b).toString('base64')];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cp-unlink-'));
    db = await PgliteExecutor.open(join(dir, 'data'));
    await migrate(db);
    await loadDataset(db, readDataset());
    const config = loadConfig({ LOG_LEVEL: 'debug', MAX_EVENT_LOOP_DELAY_MS: '0', TRUST_PROXY: '127.0.0.1' });
    const stream = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    app = await buildApp(config, { db, now: () => now, logger: { level: 'debug', stream } });
    for (let i = 1; i <= 6; i++) await createRespondent(db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, operatorActor(), now);
    const mails: { to: string; text: string }[] = [];
    await runRounds(db, { linkFor: (o, t) => `http://127.0.0.1/checkin/o/${o}#${t}`, send: async (m) => void mails.push(m) }, now);
    const suite = RSABSSA.SHA384.PSS.Randomized();
    for (const [i, m] of mails.entries()) {
      const who = m.to;
      const headers = { 'user-agent': `agent-of-${who}`, 'x-forwarded-for': `10.9.8.${i + 1}` };
      const link = linkToken(m.text)!;
      const o = (await app.inject({ method: 'POST', url: `/checkin/o/${ORG}/open`, headers, payload: { token: link } })).json();
      const pk = await crypto.subtle.importKey('spki', new Uint8Array(Buffer.from(o.publicKey, 'base64url')), { name: 'RSA-PSS', hash: 'SHA-384' }, true, [
        'verify',
      ]);
      const prepared = suite.prepare(crypto.getRandomValues(new Uint8Array(32)));
      const { blindedMsg, inv } = await suite.blind(pk, prepared);
      const issued = await app.inject({
        method: 'POST',
        url: `/checkin/o/${ORG}/issue`,
        headers,
        payload: { token: link, blindedMessage: Buffer.from(blindedMsg).toString('base64url') },
      });
      const blindSig = Buffer.from(issued.json().blindSignature, 'base64url');
      const sig = await suite.finalize(pk, prepared, blindSig, inv);
      const answered = await app.inject({
        method: 'POST',
        url: '/checkin/answer',
        headers,
        payload: {
          orgId: ORG,
          keyId: o.keyId,
          message: Buffer.from(prepared).toString('base64url'),
          signature: Buffer.from(sig).toString('base64url'),
          level: (i % 5) + 1,
          comment: `comment number ${i}`,
        },
      });
      expect(answered.statusCode).toBe(200);
      secrets.push({
        who,
        values: [
          link,
          ...forms(blindedMsg),
          ...forms(blindSig),
          ...forms(prepared),
          ...forms(sig),
          ...forms(inv),
          headers['user-agent'],
          headers['x-forwarded-for'],
        ],
        raw: [blindedMsg, blindSig, prepared, sig, inv],
      });
    }
    const names = await db.query<{ relname: string }>(
      sql(
        't.tables',
        `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND relkind = 'r' ORDER BY 1`,
      ),
    );
    tables = {};
    for (const { relname } of names) tables[relname] = await db.query(sql(`t.dump.${relname}`, `SELECT * FROM "${relname}"`));
    const chunks: Buffer[] = [];
    await db.backup!(
      new Writable({
        write(c, _e, done) {
          chunks.push(Buffer.from(c));
          done();
        },
      }),
    );
    backup = gunzipSync(Buffer.concat(chunks));
    await app.close();
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const text = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? Buffer.from(x).toString('hex') : typeof x === 'bigint' ? String(x) : x));

  it('the exchange happened: 6 pulses in Web at one hour, 6 spent tokens, 6 issued links, no link waiting', () => {
    const pulses = tables.pulses.filter((p) => p.org_id === ORG && String(p.comment ?? '').startsWith('comment number'));
    expect(pulses).toHaveLength(6);
    expect(new Set(pulses.map((p) => new Date(p.created_at as string).toISOString()))).toEqual(new Set(['2026-11-23T09:00:00.000Z']));
    expect(new Set(pulses.map((p) => p.subteam_id))).toEqual(new Set(['team_web']));
    expect(tables.checkin_spent).toHaveLength(6);
    expect(tables.checkin_round_links.filter((l) => l.state === 2)).toHaveLength(6);
    // What waits is Thursday's reminders, which carry no link.
    expect(tables.checkin_outbox.map((o) => [o.kind, o.token_sealed])).toEqual(Array.from({ length: 6 }, () => ['reminder', null]));
    expect(logs.filter((l) => l.includes('"route":"/checkin/answer"'))).toHaveLength(6);
  });

  it('no table, backup byte or log line holds a link token, blinded message, message, signature, address or agent', () => {
    const dump = text(tables);
    const log = logs.join('');
    const latin = backup.toString('latin1');
    const found: string[] = [];
    for (const { who, values } of secrets) {
      for (const v of values) {
        if (dump.includes(v)) found.push(`${who}: table holds ${v.slice(0, 12)}…`);
        if (log.includes(v)) found.push(`${who}: log holds ${v.slice(0, 12)}…`);
        if (latin.includes(v)) found.push(`${who}: backup holds ${v.slice(0, 12)}…`);
      }
    }
    // And as raw bytes (a bytea column would hold them so).
    for (const { who, raw } of secrets)
      for (const [i, b] of raw.entries()) if (backup.includes(Buffer.from(b))) found.push(`${who}: backup holds raw value ${i}`);
    expect(found).toEqual([]);
    // The searches can find what is there: the roster, the comments, and a link's digest (bytea).
    expect(latin).toContain('web1@acme.test');
    expect(latin).toContain('comment number 0');
    expect(backup.includes(createHash('sha256').update(secrets[0].values[0]).digest())).toBe(true);
    expect(dump).toContain(createHash('sha256').update(secrets[0].values[0]).digest('hex'));
  });

  it('no row or log line names both a pulse and a respondent; the check-in routes log no respondent, email or address', () => {
    const respondents = tables.respondents.map((r) => [r.id as string, r.email as string]);
    const pulseIds = tables.pulses.filter((p) => String(p.comment ?? '').startsWith('comment number')).map((p) => p.id as string);
    const tying: string[] = [];
    for (const [name, rows] of Object.entries(tables)) {
      for (const row of rows) {
        const t = text(row);
        if (pulseIds.some((p) => t.includes(p)) && respondents.some(([id, email]) => t.includes(id) || t.includes(email)))
          tying.push(`${name}: ${t.slice(0, 80)}`);
      }
    }
    expect(tying).toEqual([]);
    const checkinLines = logs.filter((l) => l.includes('/checkin/'));
    expect(checkinLines.length).toBeGreaterThanOrEqual(18);
    for (const line of checkinLines) {
      for (const [id, email] of respondents) {
        expect(line).not.toContain(id);
        expect(line).not.toContain(email);
      }
      expect(line).not.toMatch(/10\.9\.8\.|agent-of|user-agent|remoteAddress/);
    }
    // What a check-in line holds: the route's pattern, never the organization's value in a path with a token.
    const answerLine = JSON.parse(checkinLines.find((l) => l.includes('"route":"/checkin/answer"'))!);
    expect(Object.keys(answerLine).sort()).toEqual(['durationMs', 'level', 'method', 'msg', 'pid', 'hostname', 'reqId', 'route', 'status', 'time'].sort());
  });

  it('every respondent of the team is an equally good candidate for every pulse: what is kept of each respondent is the same', () => {
    // Per respondent, everything kept about their week: their place in the round, the same for all.
    const perRespondent = tables.checkin_round_members.map(({ respondent_id: _r, ...rest }) => text(rest));
    expect(perRespondent).toHaveLength(6);
    expect(new Set(perRespondent).size).toBe(1);
    // The links name no one: a digest, the week, the key's slot and a state.
    expect(Object.keys(tables.checkin_round_links[0]).sort()).toEqual(['org_id', 'state', 'team_slot', 'token_hash', 'week']);
    // The spent tokens: one key (the team's of the week), no time, nothing else.
    expect(new Set(tables.checkin_spent.map((s) => s.key_id)).size).toBe(1);
    expect(Object.keys(tables.checkin_spent[0]).sort()).toEqual(['key_id', 'org_id', 'token_hash']);
    // The audit log has no row about the answers or the issuance.
    expect(tables.audit_events.filter((a) => /checkin|pulse/.test(text(a)) && a.created_at && new Date(a.created_at as string) >= now)).toEqual([]);
  });
});
