import cluster from 'node:cluster';
import type { Command } from 'commander';
import { runPrimary, tellPrimary } from '../../cluster.js';
import { loadConfig, type Config } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openDatabase } from '../../db/open.js';
import { countOrgs } from '../../db/repositories/orgs.js';
import { createDemo } from '../../domain/demo.js';
import { inviteMember } from '../../domain/members.js';
import { operatorActor } from '../../domain/audit.js';
import { isInitialized } from '../../db/pglite-init.js';
import { processLog } from '../../telemetry/log.js';
import { checkinWayIn, printWayIn } from '../first-run.js';
import { cliCommand, maskedNote, maskedUrl } from '../hints.js';
import { demoAlertSettings, demoInstructions } from './demo.js';

export const SIGNALS_HELP = `
Signals:
  SIGTERM, SIGINT  drain and exit 0: /readyz answers 503 at once, the port serves SHUTDOWN_DELAY_MS
                   longer, requests in flight finish, connections close after an answer that says
                   Connection: close or once idle past their 5 s keep-alive; past
                   SHUTDOWN_GRACE_MS the process exits 1
  SIGHUP           with WORKERS of 2 or more: replace the workers one at a time (the newly built
                   code, the same environment), never more than WORKERS; the port stays open.
                   A single process ignores it.
See docs/deployment.md.`;

export function registerServe(program: Command) {
  program.addHelpText(
    'after',
    '\nSignals to `serve`: SIGTERM or SIGINT drain and exit 0; SIGHUP replaces the WORKERS one at a time.\nSee `climate-pulse serve --help` and docs/deployment.md.',
  );
  program
    .command('serve')
    .description('apply pending migrations, then serve the API')
    .option('--demo-if-empty', 'first create a demo organization when the database holds none (what `npm start` does)')
    .addHelpText('after', SIGNALS_HELP)
    .action(async (opts: { demoIfEmpty?: boolean }) => {
      if (cluster.isWorker) {
        // A rolling restart waits for this worker: it must hear why it could not start.
        await serveWorker(opts).catch(async (err: Error) => {
          const reason = (err?.message ?? String(err)).split('\n')[0];
          console.error(`climate-pulse: worker ${process.pid} could not start: ${reason}`);
          await tellPrimary({ type: 'climate-pulse:failed', reason });
          process.exit(1);
        });
        return;
      }
      const config = loadConfig();
      const log = processLog(config.logLevel);
      if (runPrimary(config, log)) return;
      // `systemctl reload` sends SIGHUP, whose default action ends the process: one process keeps serving.
      process.on('SIGHUP', () => log.warn({}, 'SIGHUP ignored: rolling restarts need WORKERS of 2 or more with DATABASE_URL; this process keeps serving'));
      await serve(config, opts);
    });
}

async function serveWorker(opts: { demoIfEmpty?: boolean }) {
  process.on('SIGHUP', () => undefined); // the primary replaces the workers; a SIGHUP to the whole group must not end them
  await serve(loadConfig(), opts);
  await tellPrimary({ type: 'climate-pulse:ready' });
}

/**
 * What a start says while it works (issue 54, item 2): a line as each step begins and ends, and
 * one every PROGRESS_EVERY_MS while a step lasts, so that a first start (a new embedded database,
 * every migration, the demo's 120 days) is never silent. Said by a single process, or by the first
 * worker of WORKERS (the others start the same way, silently).
 */
export const PROGRESS_EVERY_MS = 3_000;

function progress(say: (line: string) => void, quiet: boolean) {
  const started = performance.now();
  const secs = (from: number) => `${((performance.now() - from) / 1000).toFixed(1)} s`;
  return {
    async step<T>(what: string, fn: () => Promise<T>, done?: (value: T) => string): Promise<T> {
      if (quiet) return fn();
      const from = performance.now();
      say(`climate-pulse: ${what}…`);
      const timer = setInterval(() => say(`climate-pulse: still ${what} (${secs(from)})`), PROGRESS_EVERY_MS);
      timer.unref();
      try {
        const value = await fn();
        say(`climate-pulse: ${done ? done(value) : `${what}: done`} in ${secs(from)}`);
        return value;
      } finally {
        clearInterval(timer);
      }
    },
    total: () => secs(started),
    seconds: () => Number(((performance.now() - started) / 1000).toFixed(1)),
  };
}

/**
 * A reader of stdout or stderr that went away (`serve | head -3`) must not stop the server: the
 * lines written after it are dropped (the logs' own stream drops its lines likewise).
 */
function dropLinesToAClosedStdout() {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}

async function serve(config: Config, opts: { demoIfEmpty?: boolean }) {
  dropLinesToAClosedStdout();
  // One log stream (docs/decisions.md, "One log stream"): stdout holds JSON lines only; what a
  // person reads while the server starts (its progress, address, the way in, a key shown once) is
  // written to stderr.
  const say = (line: string) => console.error(line);
  const first = !cluster.isWorker || cluster.worker?.id === 1;
  const steps = progress(say, !first);
  const embedded = !config.databaseUrl;
  const fresh = embedded && !isInitialized(config.dataDir);
  const db = await steps.step(
    embedded
      ? fresh
        ? `creating the embedded database in ${config.dataDir}`
        : `opening the embedded database in ${config.dataDir}`
      : `connecting to PostgreSQL (${maskedUrl(config.databaseUrl!)})`,
    () => openDatabase(config),
    () => (embedded ? (fresh ? 'embedded database created' : 'embedded database open') : 'connected'),
  );
  let demo: Awaited<ReturnType<typeof createDemo>> | undefined;
  let server: Awaited<ReturnType<typeof import('../../server.js').startServer>>;
  let closeOnSignals: typeof import('../../server.js').closeOnSignals;
  try {
    await steps.step(
      'applying migrations',
      () => migrate(db),
      (ran) => (ran.length ? `applied ${ran.length} migrations` : 'database is up to date'),
    );
    if (opts.demoIfEmpty && (await countOrgs(db)) === 0) {
      demo = await steps.step(
        'making the demo organization (120 days of pulses, then its alerts)',
        () => createDemo(db, new Date(), demoAlertSettings(config)),
        (d) => `demo organization made (${d.pulses} pulses)`,
      );
    }
    server = await steps.step(
      'starting the HTTP server',
      async () => {
        // Loaded here, not at the top: every other command starts without the HTTP stack (half a second).
        const mod = await import('../../server.js');
        closeOnSignals = mod.closeOnSignals;
        return mod.startServer(config, { db });
      },
      () => 'HTTP server ready',
    );
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  closeOnSignals!(server);
  // The start as a log line too: each process (each worker of WORKERS) that serves, with its time.
  processLog(config.logLevel).info(
    { address: server.address, database: server.db.kind === 'pg' ? 'postgresql' : 'embedded', startSeconds: steps.seconds() },
    `climate-pulse serving ${server.address} (started in ${steps.total()})`,
  );
  say(`climate-pulse listening on ${server.address} (${server.db.kind === 'pg' ? 'PostgreSQL' : `embedded database in ${config.dataDir}`})`);
  if (first) {
    const stop = cluster.isWorker
      ? `worker of primary ${process.ppid}, which SIGTERM or Ctrl-C stops with its workers`
      : `process ${process.pid}; SIGTERM or Ctrl-C stops it`;
    say(`climate-pulse: started in ${steps.total()} (${stop})`);
  }
  if (server.metricsAddress) say(`metrics on ${server.metricsAddress}`);
  if (server.adminAddress) say(`operator API on ${server.adminAddress}/admin/v1 (Authorization: Bearer $ADMIN_TOKEN)`);
  const base = config.publicBaseUrl?.replace(/\/+$/, '') ?? server.address.replace('0.0.0.0', '127.0.0.1');
  const hints = { mails: Boolean(config.smtpUrl), cli: cliCommand(config), note: maskedNote(config) };
  if (demo) {
    say(demoInstructions(base, demo));
    // The console's first owner: a single-use link, printed once (CONTRACT.md section 11, first run).
    const inv = await inviteMember(db, demo.orgId, { email: DEMO_OWNER_EMAIL, role: 'owner' }, operatorActor(null), new Date());
    say(
      `Console: open ${base}/console/invitations/${inv.token} to become the owner (${DEMO_OWNER_EMAIL}) of ${demo.orgId}; the link works once, for 72 hours.`,
    );
    say(checkinWayIn(base, demo.orgId, hints));
  } else {
    await printWayIn(db, base, hints, say);
  }
}

const DEMO_OWNER_EMAIL = 'owner@example.com';
