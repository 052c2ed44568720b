import { type Config, consoleBaseUrl } from '../config.js';
import type { DatabaseExecutor } from '../db/executor.js';
import { serviceSecret } from '../db/repositories/secrets.js';
import { CheckinKeys } from '../domain/checkins/keys.js';
import { runRounds, type RoundReport, type SendMail } from '../domain/checkins/rounds.js';
import { MAIL_CONNECTIONS, smtpMailer } from '../mail/index.js';
import { inSpan } from '../telemetry/spans.js';

/**
 * The check-in rounds in every server process (CONTRACT.md section 12): each process runs
 * runRounds on its own timer; the database leases each link to one process, so N processes send
 * each mail once. Without SMTP_URL rounds are still prepared (links exist for the console's CSV).
 * The log says how many mails went, never to whom.
 */
export const ROUNDS_EVERY_MS = 60_000;

type Log = { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };

export interface RoundScheduleDeps {
  db: DatabaseExecutor;
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'publicBaseUrl' | 'host' | 'port'>;
  log: Log;
  now?: () => Date;
  intervalMs?: number;
  /** A mail sender of the test's own; else SMTP_URL's. */
  send?: SendMail;
}

export const checkinLink = (base: string) => (orgId: string, token: string) => `${base}/checkin/o/${encodeURIComponent(orgId)}#${token}`;

export async function startRoundSchedule(deps: RoundScheduleDeps): Promise<{ stop(): Promise<void>; runOnce(): Promise<RoundReport> }> {
  const mailer = deps.config.smtpUrl && deps.config.mailFrom ? smtpMailer(deps.config.smtpUrl, deps.config.mailFrom) : undefined;
  const send = deps.send ?? (mailer ? (m: Parameters<SendMail>[0]) => mailer.send(m) : undefined);
  const linkFor = checkinLink(consoleBaseUrl(deps.config));
  // The week's keys are made by the round, before its first mail (another instance than the
  // check-in routes' one: the database's unique index keeps one key per team and week).
  const keys = new CheckinKeys(await serviceSecret(deps.db, 'checkin_key_seal'));
  const intervalMs = deps.intervalMs ?? ROUNDS_EVERY_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  // Its span holds the counts the log line holds, never to whom (the mails and links are no span's).
  const runOnce = () =>
    inSpan('checkins.round', async (span) => {
      const r = await runRounds(deps.db, { linkFor, send, keys, inFlight: MAIL_CONNECTIONS }, deps.now?.() ?? new Date());
      span?.setAttributes({ 'climate_pulse.round.mailed': r.mailed, 'climate_pulse.round.reminded': r.reminded, 'climate_pulse.round.failed': r.failed });
      return r;
    });
  const tick = () => {
    running = runOnce().then(
      (r) => {
        if (r.mailed + r.reminded + r.failed > 0) deps.log.info({ mailed: r.mailed, reminded: r.reminded, failed: r.failed }, 'check-in round mails');
      },
      (err) => deps.log.warn({ err: { message: (err as Error).message } }, 'check-in round run failed'),
    );
    void running.then(() => {
      if (stopped) return;
      timer = setTimeout(tick, intervalMs * (0.9 + 0.2 * Math.random()));
      timer.unref();
    });
  };
  timer = setTimeout(tick, Math.min(intervalMs, 10_000) * Math.random());
  timer.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      mailer?.close();
    },
  };
}
