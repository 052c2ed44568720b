import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import type { MemberRole } from '../../../domain/members.js';
import { getCheckinSettings, updateCheckinSettings } from '../../../domain/checkins/settings.js';
import { roundStatuses } from '../../../domain/checkins/round-status.js';
import { exportWeekLinks, linksCsv, linksFileState, participation, roundNowState, sendTestMail, startRoundNow } from '../../../domain/checkins/rounds.js';
import { ApiError } from '../../../contract/errors.js';
import type { Mailer } from '../../../mail/index.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { settingsOf } from './form.js';
import { checkinsView, sendNowView, testLinkView } from './view.js';

/** Who reads the Check-ins page: owners and admins change it, viewers read it. */
export const CHECKIN_READERS: readonly MemberRole[] = ['owner', 'admin', 'viewer'];

/**
 * The Check-ins page (CONTRACT.md section 11 amended, *Rounds you can see*). Every change is the
 * operator API's domain call: the schedule (updateCheckinSettings), "send now" (startRoundNow, the
 * round job's own start), the links file without SMTP (exportWeekLinks), the test mail
 * (sendTestMail, through the console's mailer to the member's own address).
 */
export function registerCheckinPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: Mailer }) {
  const { db, now } = deps;
  const readers = { config: { roles: CHECKIN_READERS } };
  const admin = { config: { roles: CHANGERS } };
  const mails = Boolean(deps.mailer);

  const checkinsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const at = now();
    const [settings, state, rounds, counts, links] = await Promise.all([
      getCheckinSettings(db, s.orgId),
      roundNowState(db, s.orgId, at),
      roundStatuses(db, s.orgId, at),
      participation(db, s.orgId, at),
      linksFileState(db, s.orgId, at),
    ]);
    const canChange = CHANGERS.includes(s.member.role);
    return sendPage(reply, status, checkinsView({ session: s, settings, now: state, rounds, counts, links, mails, canChange, message }));
  };
  const outcome = changeOutcome(checkinsPage, () => '/console/checkins');
  const linkFor = (o: string, t: string) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}`;

  scope.get('/checkins', readers, async (request, reply) => checkinsPage(request, reply, 200));

  const saveSettings = async (request: FastifyRequest, reply: FastifyReply) =>
    outcome(request, reply, async () => {
      await updateCheckinSettings(db, request.member.orgId, settingsOf(request.body as Form), actorOf(request), now());
      return notice(
        'Check-in settings saved. The schedule applies from the next round not yet started; reasons and flag words from the next round (this week is judged by those in force when its round started).',
        'ok',
      );
    });
  scope.post('/checkins/settings', admin, saveSettings);
  // The People page's settings form of earlier versions posts here still.
  scope.post('/people/settings', admin, saveSettings);

  scope.get('/checkins/send', admin, async (request, reply) => {
    const s = request.member;
    const [state, settings] = await Promise.all([roundNowState(db, s.orgId, now()), getCheckinSettings(db, s.orgId)]);
    if (!mails || state.startedAt || state.people === 0) return reply.redirect('/console/checkins', 303);
    return sendPage(reply, 200, sendNowView(s, state, settings));
  });
  scope.post('/checkins/send', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await startRoundNow(db, request.member.orgId, { mails }, actorOf(request), now());
      return notice(
        `This week's round started: ${r.people} ${r.people === 1 ? 'mail goes' : 'mails go'} out within a minute. The status below counts them as they go.`,
        'ok',
      );
    }),
  );

  scope.post('/checkins/test-mail', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      if (!deps.mailer) throw new ApiError('invalid_transition', 'This server sends no mail (SMTP_URL is not set), so it cannot send a test mail.');
      const to = request.member.member.email;
      await sendTestMail(
        db,
        request.member.orgId,
        { to, send: (m) => deps.mailer!.send(m), previewLink: `${deps.baseUrl}/console/checkins/test-link` },
        actorOf(request),
        now(),
      );
      return notice(`A test mail went to ${to}. Its link opens a page that says it is a test.`, 'ok');
    }),
  );
  scope.get('/checkins/test-link', readers, async (request, reply) => {
    const s = request.member;
    const state = await roundNowState(db, s.orgId, now());
    return sendPage(reply, 200, testLinkView(s, await getCheckinSettings(db, s.orgId), state.week));
  });

  // A file download, not a change shown on a page: the links exist in this answer only. A refusal
  // (mail is on; the links were handed out and new ones were not asked for) is the page, saying why.
  const links = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const renew = (request.body as Form).renew === '1';
      const { week, links } = await exportWeekLinks(db, request.member.orgId, { linkFor, mails, renew }, actorOf(request), now());
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-links-${week}.csv"`).send(linksCsv(links));
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) return checkinsPage(request, reply, err.statusCode, notice(err.message));
      throw err;
    }
  };
  scope.post('/checkins/links', admin, links);
  scope.post('/people/links', admin, links);
}
