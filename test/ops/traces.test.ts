import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { createRespondent } from '../../src/domain/checkins/roster.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { createEndpoint, recordEvent } from '../../src/domain/webhook-deliveries.js';
import { runScheduledAlerts } from '../../src/jobs/alerts.js';
import { runRetention } from '../../src/jobs/retention.js';
import { startRoundSchedule } from '../../src/jobs/rounds.js';
import { WebhookWorker } from '../../src/jobs/webhooks.js';
import { startServer } from '../../src/server.js';
import { startTracing, stopTracing } from '../../src/telemetry/index.js';
import { answer, linkToken, openAndIssue } from '../checkin/helpers.js';
import { KEYS, readDataset } from '../fixtures/dataset.js';
import { createTestDatabase, TEST_REDIS_URL } from '../helpers/db.js';
import { ROOT } from '../helpers/process.js';
import { startReceiver, waitFor } from '../helpers/receiver.js';
import { startOtlpReceiver, tree, type ReceivedSpan } from './traces-otlp.js';

/**
 * Issue 54, item 6: OpenTelemetry traces, exported to a real OTLP/HTTP receiver started here (no
 * exporter is mocked). A request's span with its queries' spans under it, the jobs' spans, the
 * check-in routes' spans holding nothing of a link, an address or an agent, the export at shutdown,
 * and no OpenTelemetry module loaded while traces are off.
 */
const silent = { info: () => undefined, warn: () => undefined };
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const roots = (spans: ReceivedSpan[]) => spans.filter((s) => !s.parentSpanId);
/** The roots of requests: the jobs' own (a round's or retention's first run comes 0-10 s after the start, at random) left out. */
const JOBS = new Set(['checkins.round', 'retention.run', 'alerts.run']);
const requestRoots = (spans: ReceivedSpan[]) => roots(spans).filter((s) => !JOBS.has(s.name));
const shapeOf = (spans: ReceivedSpan[], name: string) =>
  roots(spans)
    .filter((r) => r.name === name)
    .map((r) => tree(spans, r).join('\n'));
const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const query = (name: string) => ({ 'db.system.name': 'postgresql', 'db.query.summary': name });
/** A caller's trace (a proxy's, say), sent in `traceparent`. */
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
/** The OTLP JSON span kinds. */
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
/** Every attribute key a span may carry (src/telemetry/sdk.ts); the jobs' own are `climate_pulse.*`. */
const ALLOWED = ['http.request.method', 'http.route', 'http.response.status_code', 'fastify.type', 'hook.callback.name', 'db.system.name', 'db.query.summary'];

describe('traces (issue 54)', () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-traces-'));
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
  });
  afterAll(async () => {
    await otlp?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a server exports a span per request (route pattern, status), its queries under it, at shutdown at the latest', async () => {
    otlp.clear();
    const tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const config = loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ALERTS_INTERVAL_MINUTES: '0',
      WEBHOOK_POLL_MS: '60000',
      DATA_DIR: dataDir,
      ...(TEST_REDIS_URL ? { REDIS_URL: TEST_REDIS_URL } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    const server = await startServer(config, { db: tdb.db });
    const headers = {
      authorization: `Bearer ${KEYS.acme}`,
      'user-agent': 'agent-007',
      'x-forwarded-for': '203.0.113.9',
      traceparent: `00-${CALLER_TRACE}-b7ad6b7169203331-01`,
    };
    expect((await fetch(`${server.address}/v1/pulses?from=2026-11-02T00:00:00.000Z&limit=7`, { headers })).status).toBe(200);
    expect((await fetch(`${server.address}/readyz`)).status).toBe(200);
    expect((await fetch(`${server.address}/v1/n0such/t0ken-value?x=1`, { headers })).status).toBe(404);
    // The console: its session's lookup and preHandler hooks, with a cookie that names no session.
    const cookie = `cp_session=${'n0-such-session'.padEnd(40, 'x')}`;
    expect((await fetch(`${server.address}/console/overview`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
    // The batch waits 5 s: nothing has gone yet, and the shutdown exports it all.
    expect(otlp.requests).toEqual([]);
    await server.close();
    await tdb.drop?.();

    expect(otlp.requests.map((r) => [r.path, r.headers['content-type']])).toEqual([['/v1/traces', 'application/json']]);
    const spans = otlp.spans();
    expect(requestRoots(spans).map((s) => s.name)).toEqual(['GET /v1/pulses', 'GET /readyz', 'GET', 'GET /console/overview']);
    // The key's lookup comes before the body is read (onRequest): under the request; the handler's queries under the handler.
    expect(shapeOf(spans, 'GET /v1/pulses')).toEqual(['GET /v1/pulses\n  api_keys.by_hash\n  handler /v1/pulses\n    pulses.list.plain\n    teams.names']);
    expect(shapeOf(spans, 'GET /readyz')).toEqual(['GET /readyz\n  handler /readyz\n    health.ready']);
    expect(shapeOf(spans, 'GET')).toEqual(['GET\n  notFoundHandler']);
    expect(shapeOf(spans, 'GET /console/overview')).toEqual([
      'GET /console/overview\n  console_sessions.by_id_with_member\n  preHandler\n  preHandler\n  preHandler',
    ]);

    const [pulses] = byName(spans, 'GET /v1/pulses');
    expect(pulses).toMatchObject({ kind: SERVER, status: { code: 0 }, events: [] });
    expect(pulses.attributes).toEqual({ 'http.request.method': 'GET', 'http.route': '/v1/pulses', 'http.response.status_code': 200 });
    expect(byName(spans, 'GET')[0].attributes).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 404 });
    const [handler] = byName(spans, 'handler /v1/pulses');
    expect(handler).toMatchObject({ kind: INTERNAL, parentSpanId: pulses.spanId, traceId: pulses.traceId });
    expect(handler.attributes).toEqual({ 'fastify.type': 'request-handler', 'http.route': '/v1/pulses', 'hook.callback.name': 'anonymous' });
    const [list] = byName(spans, 'pulses.list.plain');
    expect(list).toMatchObject({ kind: CLIENT, parentSpanId: handler.spanId, traceId: pulses.traceId });
    expect(list.attributes).toEqual(query('pulses.list.plain'));
    expect(byName(spans, 'api_keys.by_hash')[0]).toMatchObject({ parentSpanId: pulses.spanId, attributes: query('api_keys.by_hash') });
    // Each request its own trace: no caller's traceparent is read.
    expect(new Set(requestRoots(spans).map((s) => s.traceId)).size).toBe(4);
    expect(spans.filter((s) => s.traceId === CALLER_TRACE)).toEqual([]);
    // The resource: the service's name and version, the SDK's; no host, process or address.
    for (const s of spans) {
      expect(s.resource).toEqual({
        'service.name': 'climate-pulse',
        'service.version': VERSION,
        'telemetry.sdk.language': 'nodejs',
        'telemetry.sdk.name': 'opentelemetry',
        'telemetry.sdk.version': expect.any(String),
      });
    }
    // Not the path's values, the query, the key, the agent or an address (the library's url.path was removed).
    const raw = otlp.requests.map((r) => r.body.toString('utf8')).join('\n');
    for (const secret of [
      KEYS.acme,
      'cp_test',
      'agent-007',
      '203.0.113.9',
      '127.0.0.1',
      't0ken-value',
      'n0such',
      '2026-11-02',
      'limit',
      'url.',
      'n0-such-session',
      'cp_session',
    ]) {
      expect(raw, secret).not.toContain(secret);
    }
  }, 60_000);

  it("check-in requests: spans of the route's pattern, status and queries, nothing of a link, an answer, an address or an agent; the jobs' spans", async () => {
    otlp.clear();
    const tdb = await createTestDatabase();
    await loadDataset(tdb.db, readDataset());
    const ORG = 'org_acme';
    let now = new Date('2026-11-23T09:30:00.000Z'); // a Monday, after the default 09:00 UTC round
    const op = operatorActor('127.0.0.1');
    for (let i = 1; i <= 6; i++) await createRespondent(tdb.db, ORG, { email: `web${i}@acme.test`, team: 'Web' }, op, now);
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    const tracing = await startTracing(config.traces, silent);
    try {
      const app = await buildApp(config, { db: tdb.db, now: () => now, traces: true });
      const mails: { to: string; text: string }[] = [];
      const rounds = await startRoundSchedule({
        db: tdb.db,
        config,
        log: silent,
        now: () => now,
        intervalMs: 3_600_000,
        send: async (m) => void mails.push(m),
      });
      await rounds.stop(); // its timer's run (if it came first) or this one mails
      await rounds.runOnce();
      expect(mails).toHaveLength(6);
      const link = linkToken(mails[0].text)!;
      const token = await openAndIssue(app, ORG, link);
      now = new Date('2026-11-23T10:47:12.345Z');
      const answered = await app.inject({
        method: 'POST',
        url: '/checkin/answer',
        remoteAddress: '198.51.100.23',
        headers: { 'user-agent': 'agent-checkin-42' },
        payload: { orgId: ORG, keyId: token.keyId, message: token.message, signature: token.signature, level: 4, comment: 'A quiet good week' },
      });
      expect(answered.statusCode, answered.body).toBe(200);
      expect((await answer(app, ORG, token, { level: 1 })).statusCode).toBe(409);

      // The jobs: an alert run, a webhook delivery attempt.
      const report = await runScheduledAlerts({ db: tdb.db, config, now: () => now });
      const hooks = await startReceiver();
      await createEndpoint(tdb.db, ORG, { url: `${hooks.url}/hook-s3cret`, eventTypes: null, now, allowPrivate: true });
      await recordEvent(tdb.db, ORG, 'action.created', { id: 'act_x' }, now);
      const worker = new WebhookWorker(tdb.db, { pollMs: 60_000, timeoutMs: 5_000, retryScheduleMs: [1000], allowPrivate: true });
      await worker.round();
      const settled = sql('test.delivery_status', "SELECT status FROM webhook_deliveries WHERE status = 'succeeded'");
      expect(await waitFor(async () => (await tdb.db.query(settled)).length === 1)).toBe(true);
      await worker.close();
      await hooks.close();
      await runRetention({ db: tdb.db, log: silent, now: () => now });
      await app.close();
      await tracing!.forceFlush();

      const spans = otlp.spans();
      expect(shapeOf(spans, 'POST /checkin/o/:orgId/open')).toEqual([
        [
          'POST /checkin/o/:orgId/open',
          '  handler /checkin/o/:orgId/open',
          '    checkin_round_links.by_token',
          '    checkin_round_links.opened',
          '    checkin_keys.by_slot',
          '    orgs.get',
          '    checkin_rounds.read',
          '    checkin_round_slots.list',
          '    teams.names',
        ].join('\n'),
      ]);
      expect(shapeOf(spans, 'POST /checkin/o/:orgId/issue')).toEqual([
        [
          'POST /checkin/o/:orgId/issue',
          '  handler /checkin/o/:orgId/issue',
          '    checkin_round_links.by_token',
          '    checkin_keys.by_slot',
          '    db.transaction',
          '      checkin_round_links.issued',
        ].join('\n'),
      ]);
      const answerShape = [
        'POST /checkin/answer',
        '  handler /checkin/answer',
        '    checkin_keys.by_id',
        '    checkin_rounds.read',
        '    db.transaction',
        '      checkin_spent.insert',
      ];
      const [first, second] = shapeOf(spans, 'POST /checkin/answer');
      expect(first).toBe([...answerShape, '      checkin_round_slots.take', '      pulse_writes.insert'].join('\n'));
      expect(second).toBe(answerShape.join('\n')); // the token spent already: 409 at its first write
      expect(byName(spans, 'POST /checkin/answer').map((s) => s.attributes)).toEqual([
        { 'http.request.method': 'POST', 'http.route': '/checkin/answer', 'http.response.status_code': 200 },
        { 'http.request.method': 'POST', 'http.route': '/checkin/answer', 'http.response.status_code': 409 },
      ]);
      // A 409 is the client's error: the request span's status stays unset; the handler that threw says ERROR, without the error's message.
      expect(byName(spans, 'POST /checkin/answer').map((s) => s.status)).toEqual([{ code: 0 }, { code: 0 }]);
      expect(byName(spans, 'handler /checkin/answer').map((s) => s.status)).toEqual([{ code: 0 }, { code: 2 }]);

      // The round: its counts, its queries under it (never to whom, never a link).
      const [round] = byName(spans, 'checkins.round').filter((s) => s.attributes['climate_pulse.round.mailed'] === 6);
      expect(round).toMatchObject({ parentSpanId: '', kind: INTERNAL });
      expect(round.attributes).toEqual({ 'climate_pulse.round.mailed': 6, 'climate_pulse.round.reminded': 0, 'climate_pulse.round.failed': 0 });
      const underRound = tree(spans, round).slice(1);
      expect(underRound).toContain('  db.transaction');
      expect(underRound).toContain('    checkin_round_links.insert');
      expect(underRound.filter((l) => l === '  checkin_outbox.erase')).toHaveLength(6);
      // The alert run and the webhook attempt.
      const [alerts] = byName(spans, 'alerts.run');
      expect(alerts.attributes).toEqual({ 'climate_pulse.alerts.organizations': report.organizations, 'climate_pulse.alerts.raised': report.raised.length });
      expect(tree(spans, alerts)[1]).toBe('  alerts.orgs_with_pulses_between');
      const [delivery] = byName(spans, 'webhooks.deliver');
      expect(delivery).toMatchObject({ parentSpanId: '', attributes: { 'climate_pulse.webhook.attempt': 1, 'climate_pulse.webhook.outcome': 'succeeded' } });
      expect(tree(spans, delivery)).toEqual(['webhooks.deliver', '  webhook_deliveries.settle_succeeded']);

      const [retention] = byName(spans, 'retention.run');
      expect(retention).toMatchObject({ parentSpanId: '', attributes: {} });
      expect(tree(spans, retention).length).toBeGreaterThan(1);

      // Every attribute of every span is on the allow-list; nothing sent names a link, an answer, a person, an address or an agent.
      const keys = new Set(spans.flatMap((s) => Object.keys(s.attributes)).filter((k) => !k.startsWith('climate_pulse.')));
      expect([...keys].filter((k) => !ALLOWED.includes(k))).toEqual([]);
      expect(spans.flatMap((s) => s.events)).toEqual([]);
      const raw = otlp.requests.map((r) => r.body.toString('utf8')).join('\n');
      const secrets = [link, token.message, token.signature, token.keyId, ...mails.map((m) => m.to), 'A quiet good week', '198.51.100.23', 'agent-checkin-42'];
      for (const secret of [...secrets, 'lightMyRequest', '127.0.0.1', '/checkin/o/org_acme', 'hook-s3cret', 'act_x'])
        expect(raw, secret).not.toContain(secret);
    } finally {
      await tracing?.shutdown();
      await tdb.close();
    }
  }, 60_000);

  it('OTLP/HTTP protobuf by default: the same spans, as bytes, and none of the request', async () => {
    otlp.clear();
    const tdb = await createTestDatabase();
    const config = loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces` });
    const tracing = await startTracing(config.traces, silent);
    try {
      const app = await buildApp(config, { db: tdb.db, traces: true });
      expect((await app.inject({ url: '/readyz?probe=v4lue', headers: { 'user-agent': 'agent-proto' } })).statusCode).toBe(200);
      await app.close();
      await tracing!.forceFlush();
      expect(otlp.requests.map((r) => [r.path, r.headers['content-type']])).toEqual([['/v1/traces', 'application/x-protobuf']]);
      const body = otlp.requests[0].body;
      // Protobuf writes strings as their UTF-8 bytes.
      for (const text of ['GET /readyz', 'handler /readyz', 'health.ready', 'http.route', 'climate-pulse'])
        expect(body.includes(Buffer.from(text)), text).toBe(true);
      for (const text of ['v4lue', 'agent-proto', '127.0.0.1', 'url.path']) expect(body.includes(Buffer.from(text)), text).toBe(false);
    } finally {
      await tracing?.shutdown();
      await tdb.close();
    }
  }, 60_000);

  it('a collector that cannot be reached: requests are answered, and one warning says so', async () => {
    const closed = await startOtlpReceiver();
    await closed.close(); // its port, now refusing
    const tdb = await createTestDatabase();
    const config = loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', OTEL_EXPORTER_OTLP_ENDPOINT: closed.url });
    const warnings: object[] = [];
    const tracing = await startTracing(config.traces, { warn: (obj, msg) => void warnings.push({ ...obj, msg }) });
    try {
      const app = await buildApp(config, { db: tdb.db, traces: true });
      expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
      expect(await waitFor(() => warnings.length > 0, 10_000)).toBe(true); // the batch's export, 5 s on
      expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
      await new Promise((r) => setTimeout(r, 6_000)); // the next export fails too, unsaid
      await app.close();
      expect(warnings).toEqual([
        { otel: expect.stringContaining('ECONNREFUSED'), msg: 'traces: the OpenTelemetry SDK reports a problem (at most one line a minute)' },
      ]);
    } finally {
      await stopTracing(tracing, 3_000, { warn: () => undefined });
      await tdb.close();
    }
  }, 60_000);

  it('off unless an endpoint or OTEL_TRACES_EXPORTER=otlp is set: then no OpenTelemetry module is loaded', async () => {
    const log = join(dataDir, 'resolved.txt');
    // A child process whose module resolutions are written down: the server's modules, and startTracing.
    const hook = `export async function resolve(s, c, next) { const r = await next(s, c); if (/\\/@(opentelemetry|fastify\\/otel)\\//.test(r.url)) (await import('node:fs')).appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }`;
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const dist = ${JSON.stringify(join(ROOT, 'dist'))};
      await import(dist + '/server.js');
      await import(dist + '/app.js');
      const { loadConfig } = await import(dist + '/config.js');
      const { startTracing } = await import(dist + '/telemetry/index.js');
      const tracing = await startTracing(loadConfig(process.env).traces, { warn() {} });
      process.stdout.write(String(tracing !== undefined));
      await tracing?.shutdown();
    `;
    const run = async (env: Record<string, string>) => {
      rmSync(log, { force: true });
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH, ...env } });
      return { on: stdout, loaded: existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [] };
    };
    expect(await run({})).toEqual({ on: 'false', loaded: [] });
    expect(await run({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_EXPORTER: 'none' })).toEqual({ on: 'false', loaded: [] });
    const on = await run({ OTEL_TRACES_EXPORTER: 'otlp' });
    expect(on.on).toBe('true');
    expect(on.loaded.some((url) => url.includes('/@opentelemetry/sdk-node/'))).toBe(true);
  }, 60_000);
});
