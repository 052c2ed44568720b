import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

/**
 * The page's script, bundled at build time (scripts/bundle.mjs: the client in
 * src/checkin/client/checkin.ts with the blind-signature library) into dist/, which is two levels
 * above this module whether it runs compiled (dist/checkin/) or from its source (src/checkin/,
 * the tests, which build first). Nothing is bundled at start.
 */
const SCRIPT_FILE = fileURLToPath(new URL('../../dist/checkin/assets/checkin.js', import.meta.url));

/** An asset of the page, under a name that holds its content's hash: `checkin.<16 hex>.js`. */
interface HashedAsset {
  file: string;
  type: string;
  body: Buffer;
}
const hashed = (name: string, ext: string, type: string, body: Buffer): HashedAsset => ({
  file: `${name}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.${ext}`,
  type,
  body,
});

/** Read once per process: every app built in it (tests build hundreds) serves the same files. */
let assets: { script: HashedAsset; css: HashedAsset } | undefined;
function pageAssets() {
  if (assets) return assets;
  let script: Buffer;
  try {
    script = readFileSync(SCRIPT_FILE);
  } catch (err) {
    throw new Error(`The check-in page's script is missing (${SCRIPT_FILE}): run \`npm run build\`, which bundles it (scripts/bundle.mjs).`, { cause: err });
  }
  assets = {
    script: hashed('checkin', 'js', 'text/javascript; charset=utf-8', script),
    css: hashed('checkin', 'css', 'text/css; charset=utf-8', Buffer.from(CHECKIN_CSS)),
  };
  return assets;
}

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
  const { script, css } = pageAssets();
  const hrefs = { script: `${CHECKIN_PREFIX}/assets/${script.file}`, css: `${CHECKIN_PREFIX}/assets/${css.file}` };
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

      scope.get('/o/:orgId', hidden, async (_request, reply) => sendHtml(reply, checkinPage(hrefs)));
      scope.get('/about', hidden, async (_request, reply) => sendHtml(reply, aboutPage(hrefs)));
      // Named by their content: a new release is a new name, so they are cached for a year, as the console's are.
      for (const asset of [script, css]) {
        scope.get(`/assets/${asset.file}`, hidden, async (_request, reply) =>
          reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body),
        );
      }

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
