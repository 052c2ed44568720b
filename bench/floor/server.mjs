// The floor: bare node:http + pg, the plainest correct SQL per scenario, JSON.stringify,
// no auth, no validation. It answers for one organization given in FLOOR_ORG.
import http from 'node:http';
import { constants, createHash, createPrivateKey, createPublicKey, privateDecrypt, publicEncrypt, randomBytes, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
const org = process.env.FLOOR_ORG;
const DAY = 86_400_000;

const routes = {
  async '/v1/pulses'(url) {
    const to = new Date();
    const from = new Date(to.getTime() - 30 * DAY);
    const cursor = url.searchParams.get('cursor');
    const params = [org, from, to];
    let after = '';
    if (cursor) {
      const [c, id] = cursor.split('|');
      params.push(c, id);
      after = 'AND (p.created_at, p.id) < ($4, $5)';
    }
    const { rows } = await pool.query(
      `SELECT p.id, p.level, p.moderation_status, p.reason, p.subteam_id, t.name AS subteam_name, p.created_at
         FROM pulses p LEFT JOIN teams t ON t.org_id = p.org_id AND t.id = p.subteam_id
        WHERE p.org_id = $1 AND p.created_at >= $2 AND p.created_at < $3 ${after}
        ORDER BY p.created_at DESC, p.id DESC LIMIT 51`,
      params,
    );
    const items = rows.slice(0, 50).map((r) => ({
      id: r.id,
      level: r.level,
      moderationStatus: r.moderation_status,
      reason: r.reason,
      subteamId: r.subteam_id,
      subteamName: r.subteam_name,
      createdAt: r.created_at.toISOString(),
    }));
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > 50 ? `${last.createdAt}|${last.id}` : null };
  },
  async '/v1/stats'() {
    const {
      rows: [all],
    } = await pool.query('SELECT count(*)::int AS n, avg(level)::float8 AS a FROM pulses WHERE org_id = $1', [org]);
    const {
      rows: [week],
    } = await pool.query(`SELECT count(*)::int AS n, avg(level)::float8 AS a FROM pulses WHERE org_id = $1 AND created_at >= now() - interval '7 days'`, [org]);
    const r2 = (x) => (x === null ? null : Math.round(x * 100) / 100);
    return { avgLevel: r2(all.a), minimumSample: 5, pulseCount: all.n, weeklyAvgLevel: r2(week.a), weeklyPulseCount: week.n };
  },
  async '/v1/stats/daily'(url) {
    const to = new Date();
    const from = url.searchParams.get('from') ? new Date(url.searchParams.get('from')) : new Date(to.getTime() - 90 * DAY);
    const { rows } = await pool.query(
      `SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date, count(*)::int AS count, round(avg(level), 2)::float8 AS avg
         FROM pulses WHERE org_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1 ORDER BY 1`,
      [org, from, to],
    );
    return { from: from.toISOString(), to: to.toISOString(), days: rows };
  },
  async '/v1/comments'() {
    const to = new Date(Math.floor(Date.now() / DAY) * DAY + DAY);
    const from = new Date(to.getTime() - 30 * DAY);
    const {
      rows: [s],
    } = await pool.query('SELECT count(*)::int AS n FROM pulses WHERE org_id = $1 AND created_at >= $2 AND created_at < $3', [org, from, to]);
    if (s.n < 5) return { items: [], minimumSample: 5, nextCursor: null, suppressed: true };
    const { rows } = await pool.query(
      `SELECT id, comment, created_at FROM pulses WHERE org_id = $1 AND moderation_status = 'CLEAN' AND comment <> ''
          AND created_at >= $2 AND created_at < $3 ORDER BY created_at DESC, id DESC LIMIT 21`,
      [org, from, to],
    );
    return { items: rows.slice(0, 20).map((r) => ({ comment: r.comment })), minimumSample: 5, nextCursor: rows.length > 20 ? 'x' : null, suppressed: false };
  },
  async 'POST /v1/actions'(_url, body, req) {
    const input = JSON.parse(body);
    const id = `act_${randomBytes(8).toString('hex')}`;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO idempotency_records (org_id, api_key_id, idempotency_key, method, path, body_sha256, status_code, response_body)
         VALUES ($1, 'floor', $2, 'POST', '/v1/actions', 'x', 200, $3)`,
        [org, req.headers['idempotency-key'], JSON.stringify({ id })],
      );
      await client.query(
        `INSERT INTO actions (org_id, id, title, description, start_date, end_date, status, subteam_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, now(), NULL, 'active', NULL, now(), now())`,
        [org, id, input.title, input.description ?? null],
      );
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    } finally {
      client.release();
    }
    return { id };
  },
};

// The check-in steps (bench/checkin.ts): the same keys as the service's (FLOOR_CHECKIN_KEYS, a
// file the bench writes), the same RSA operations, links, spent tokens and pulses in tables of
// its own (bench_floor_links, bench_floor_spent, bench_floor_pulses), one statement per step.
const checkinKeys = new Map();
if (process.env.FLOOR_CHECKIN_KEYS) {
  for (const k of JSON.parse(readFileSync(process.env.FLOOR_CHECKIN_KEYS, 'utf8'))) {
    checkinKeys.set(k.id, {
      teamSlot: k.teamSlot,
      publicKey: k.publicSpki,
      pub: createPublicKey({ key: Buffer.from(k.publicSpki, 'base64url'), format: 'der', type: 'spki' }),
      priv: createPrivateKey({ key: Buffer.from(k.privatePkcs8, 'base64url'), format: 'der', type: 'pkcs8' }),
    });
  }
}
const refused = (status) => Object.assign(new Error(String(status)), { status });
const digest = (text) => createHash('sha256').update(text).digest();
const checkinRoutes = [
  [
    /^\/checkin\/o\/[^/]+\/open$/,
    async (_url, body) => {
      const { token } = JSON.parse(body);
      const { rows } = await pool.query('UPDATE bench_floor_links SET opened = true WHERE org_id = $1 AND token_hash = $2 RETURNING key_id, issued', [
        org,
        digest(token),
      ]);
      if (!rows[0]) throw refused(404);
      return { keyId: rows[0].key_id, publicKey: checkinKeys.get(rows[0].key_id).publicKey, issued: rows[0].issued };
    },
  ],
  [
    /^\/checkin\/o\/[^/]+\/issue$/,
    async (_url, body) => {
      const { token, blindedMessage } = JSON.parse(body);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(
          'UPDATE bench_floor_links SET issued = true WHERE org_id = $1 AND token_hash = $2 AND NOT issued RETURNING key_id',
          [org, digest(token)],
        );
        if (!rows[0]) throw refused(409);
        const key = checkinKeys.get(rows[0].key_id);
        const blinded = Buffer.from(blindedMessage, 'base64url');
        const sig = privateDecrypt({ key: key.priv, padding: constants.RSA_NO_PADDING }, blinded);
        if (!publicEncrypt({ key: key.pub, padding: constants.RSA_NO_PADDING }, sig).equals(blinded)) throw refused(500);
        await client.query('COMMIT');
        return { blindSignature: sig.toString('base64url') };
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      } finally {
        client.release();
      }
    },
  ],
  [
    /^\/checkin\/answer$/,
    async (_url, body) => {
      const a = JSON.parse(body);
      const key = checkinKeys.get(a.keyId);
      if (!key) throw refused(400);
      const message = Buffer.from(a.message, 'base64url');
      const ok = verify('sha384', message, { key: key.pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 48 }, Buffer.from(a.signature, 'base64url'));
      if (!ok) throw refused(400);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const spent = await client.query('INSERT INTO bench_floor_spent (org_id, key_id, token_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
          org,
          a.keyId,
          digest(message),
        ]);
        if (spent.rowCount === 0) throw refused(409);
        await client.query(
          `INSERT INTO bench_floor_pulses (org_id, id, level, reason, comment, moderation_status, subteam_id, created_at)
           VALUES ($1, $2, $3, $4, $5, 'CLEAN', $6, date_trunc('hour', now()))`,
          [org, `pls_${randomBytes(8).toString('hex')}`, a.level, a.reason ?? null, a.comment ?? null, key.teamSlot || null],
        );
        await client.query('COMMIT');
        return {};
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      } finally {
        client.release();
      }
    },
  ],
];

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://floor');
  const handler =
    req.method === 'POST' ? (routes[`POST ${url.pathname}`] ?? checkinRoutes.find(([path]) => path.test(url.pathname))?.[1]) : routes[url.pathname];
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    handler(url, body, req).then(
      (out) => {
        const json = JSON.stringify(out);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
      },
      (err) => {
        res.writeHead(err.status ?? 500).end(String(err));
      },
    );
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`floor listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
