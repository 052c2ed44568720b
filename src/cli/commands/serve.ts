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
import { checkinWayIn, printWayIn } from '../first-run.js';
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
      if (runPrimary(config, (line) => console.log(line))) return;
      // `systemctl reload` sends SIGHUP, whose default action ends the process: one process keeps serving.
      process.on('SIGHUP', () => console.log(`SIGHUP ignored: rolling restarts need WORKERS of 2 or more with DATABASE_URL; this process keeps serving`));
      await serve(config, opts);
    });
}

async function serveWorker(opts: { demoIfEmpty?: boolean }) {
  process.on('SIGHUP', () => undefined); // the primary replaces the workers; a SIGHUP to the whole group must not end them
  await serve(loadConfig(), opts);
  await tellPrimary({ type: 'climate-pulse:ready' });
}

async function serve(config: Config, opts: { demoIfEmpty?: boolean }) {
  const db = await openDatabase(config);
  let demo: Awaited<ReturnType<typeof createDemo>> | undefined;
  // Loaded here, not at the top: every other command starts without the HTTP stack (half a second).
  const { closeOnSignals, startServer } = await import('../../server.js');
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    await migrate(db);
    if (opts.demoIfEmpty && (await countOrgs(db)) === 0) demo = await createDemo(db, new Date(), demoAlertSettings(config));
    server = await startServer(config, { db });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  closeOnSignals(server);
  console.log(`climate-pulse listening on ${server.address} (${server.db.kind === 'pg' ? 'PostgreSQL' : `embedded database in ${config.dataDir}`})`);
  if (server.metricsAddress) console.log(`metrics on ${server.metricsAddress}`);
  if (server.adminAddress) console.log(`operator API on ${server.adminAddress}/admin/v1 (Authorization: Bearer $ADMIN_TOKEN)`);
  const base = config.publicBaseUrl?.replace(/\/+$/, '') ?? server.address.replace('0.0.0.0', '127.0.0.1');
  if (demo) {
    console.log(demoInstructions(base, demo));
    // The console's first owner: a single-use link, printed once (CONTRACT.md section 11, first run).
    const inv = await inviteMember(db, demo.orgId, { email: DEMO_OWNER_EMAIL, role: 'owner' }, operatorActor(null), new Date());
    console.log(
      `Console: open ${base}/console/invitations/${inv.token} to become the owner (${DEMO_OWNER_EMAIL}) of ${demo.orgId}; the link works once, for 72 hours.`,
    );
    console.log(checkinWayIn(base, demo.orgId, { mails: Boolean(config.smtpUrl) }));
  } else {
    await printWayIn(db, base, { mails: Boolean(config.smtpUrl) });
  }
}

const DEMO_OWNER_EMAIL = 'owner@example.com';
