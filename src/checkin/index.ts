import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError } from '../contract/errors.js';
import { AnswerCheckinBodySchema, CheckinOrgParamsSchema, checkinRefusal, IssueCheckinBodySchema, OpenCheckinBodySchema } from '../contract/schemas/checkin.js';
import type { DatabaseExecutor } from '../domain/database.js';
import { type CheckinKeys, publishedKeys } from '../domain/checkins/keys.js';
import { AnswerWrites, answerCheckin, issueCheckinToken, openCheckin } from '../domain/checkins/answers.js';
import { setPageHeaders } from '../http/html.js';
import { requireJsonObject } from '../http/plugins/index.js';
import { aboutPage, checkinPage, CHECKIN_CSS } from './page.js';

/**
 * The employees' face (CONTRACT.md section 12): the check-in page, its script and stylesheet, the
 * published keys, and the three JSON endpoints. It has no identity of its own: the link's token
 * rides in a body (never a path or query, so no log line holds it), the answer takes no token of
 * the link at all. The request log of the base writes the route's pattern, its status and time,
 * never an address, agent or body; limits are counted in this process's memory only.
 */
export const CHECKIN_PREFIX = '/checkin';

export interface CheckinOptions {
  db: DatabaseExecutor;
  now: () => Date;
  keys: CheckinKeys;
  commentsReleaseDelayHours: number;
  /**
   * Openings, issuances and answers per client address and minute, in memory (default 600: a
   * whole office behind one NAT address opens its links at the round's hour; a link token has 192
   * random bits, so the limit guards CPU, not guessing).
   */
  perMinute?: number;
  /** The service is reached over https (`PUBLIC_BASE_URL`): the pages carry HSTS, as the console's. */
  https?: boolean;
}

/** The page's script: the client (src/checkin/client/checkin.ts) and the blind-signature library, bundled once at start. */
async function bundleClient(): Promise<string> {
  const ts = fileURLToPath(new URL('./client/checkin.ts', import.meta.url));
  const entry = existsSync(ts) ? ts : fileURLToPath(new URL('./client/checkin.js', import.meta.url));
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    legalComments: 'eof',
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

/** Bundled once per process: every app built in it (tests build hundreds) serves the same script. */
let bundled: Promise<string> | undefined;
const clientScript = () =>
  (bundled ??= bundleClient().catch((err) => {
    bundled = undefined;
    return Promise.reject(err);
  }));

/**
 * A sliding window of one minute per key, in memory: nothing of it reaches a disk, a log or Redis.
 * Two fixed windows weighted by the current one's overlap with the last minute (as a sliding-window
 * counter does): a burst across a window's edge gets no second allowance, unlike a fixed window,
 * which let 2x the limit through in a few seconds (issue 52, L10).
 */
export class MemoryLimit {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private windowStart = 0;
  constructor(private readonly perMinute: number) {}
  take(key: string, now: number): boolean {
    const elapsed = now - this.windowStart;
    if (elapsed >= 60_000) {
      this.previous = elapsed >= 120_000 ? new Map() : this.current;
      this.current = new Map();
      this.windowStart = elapsed >= 120_000 ? now : this.windowStart + 60_000;
    }
    const weight = 1 - (now - this.windowStart) / 60_000;
    const used = (this.previous.get(key) ?? 0) * weight + (this.current.get(key) ?? 0);
    if (used + 1 > this.perMinute) return false;
    this.current.set(key, (this.current.get(key) ?? 0) + 1);
    return true;
  }
}

export async function registerCheckin(app: FastifyInstance, opts: CheckinOptions) {
  const script = await clientScript();
  const limit = new MemoryLimit(opts.perMinute ?? 600);
  await app.register(
    async (scope) => {
      const typed = scope.withTypeProvider<TypeBoxTypeProvider>();
      scope.addHook('onRequest', async (_request, reply) => {
        setPageHeaders(reply, { https: opts.https ?? false });
      });
      const limited = async (request: FastifyRequest) => {
        if (!limit.take(request.ip, Date.now())) throw new ApiError('rate_limited', 'Too many requests; try again in a minute.', { 'retry-after': '60' });
      };
      // Counted before the body is looked at (as the hand checks were), then the body must be an object.
      const checked = [limited, requireJsonObject];
      const hidden = { schema: { hide: true } };
      // This process's answers, written together when they arrive together (a group commit).
      const writes = new AnswerWrites(opts.db);
      const sendHtml = (reply: FastifyReply, text: string) => reply.type('text/html; charset=utf-8').send(text);

      scope.get('/o/:orgId', hidden, async (_request, reply) => sendHtml(reply, checkinPage()));
      scope.get('/about', hidden, async (_request, reply) => sendHtml(reply, aboutPage()));
      scope.get('/assets/checkin.js', hidden, async (_request, reply) =>
        reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(script),
      );
      scope.get('/assets/checkin.css', hidden, async (_request, reply) =>
        reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(CHECKIN_CSS),
      );

      // Each route declares its path and body like every other face; a refusal keeps the page's own words.
      const declared = <S extends object>(schema: S) => ({ schema: { hide: true, ...schema }, schemaErrorFormatter: checkinRefusal });
      const orgParams = { params: CheckinOrgParamsSchema };

      typed.get('/keys/:orgId', declared(orgParams), async (request, reply) => {
        const keys = await publishedKeys(opts.db, request.params.orgId, opts.now());
        reply.header('cache-control', 'public, max-age=60');
        return { keys };
      });

      typed.post('/o/:orgId/open', { ...declared({ ...orgParams, body: OpenCheckinBodySchema }), preValidation: checked }, async (request) =>
        openCheckin(opts.db, opts.keys, request.params.orgId, request.body.token, opts.now()),
      );

      typed.post('/o/:orgId/issue', { ...declared({ ...orgParams, body: IssueCheckinBodySchema }), preValidation: checked }, async (request) => {
        const { token, blindedMessage } = request.body;
        const sig = await issueCheckinToken(opts.db, opts.keys, request.params.orgId, token, blindedMessage, opts.now());
        return { blindSignature: sig.toString('base64url') };
      });

      typed.post('/answer', { ...declared({ body: AnswerCheckinBodySchema }), preValidation: checked }, async (request) => {
        const { orgId, ...answer } = request.body;
        return answerCheckin(opts.db, opts.keys, orgId, answer, { releaseDelayHours: opts.commentsReleaseDelayHours, writes }, opts.now());
      });
    },
    { prefix: CHECKIN_PREFIX },
  );
}
