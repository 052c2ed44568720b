import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import type { MemberRole } from '../../../domain/members.js';
import { getCheckinSettings, setDefaultLanguage, updateCheckinSettings } from '../../../domain/checkins/settings.js';
import { roundStatuses } from '../../../domain/checkins/round-status.js';
import { exportWeekLinks, linksCsv, linksFileState, participation, roundNowState, sendTestMail, startRoundNow } from '../../../domain/checkins/rounds.js';
import { ApiError } from '../../../contract/errors.js';
import type { Mailer } from '../../../mail/index.js';
import { notice, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { sendPage } from '../../views/layout.js';
import { speakerAndLanguageOf, speakerOf } from '../../views/speaker.js';
import { settingsOf } from './form.js';
import { inWords, spoken } from './said.js';
import { checkinsView, languageName, sendNowView, testLinkView } from './view.js';

/** Who reads the Check-ins page: owners and admins change it, viewers read it. */
export const CHECKIN_READERS: readonly MemberRole[] = ['owner', 'admin', 'viewer'];

/**
 * The Check-ins page (CONTRACT.md section 11 amended, *Rounds you can see*). Every change is the
 * operator API's domain call: the schedule (updateCheckinSettings), the default language of the
 * mails (setDefaultLanguage), "send now" (startRoundNow, the round job's own start), the links file
 * without SMTP (exportWeekLinks), the test mail (sendTestMail, through the console's mailer to the
 * member's own address).
 */
export function registerCheckinPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: Mailer }) {
  const { db, now } = deps;
  const readers = { config: { roles: CHECKIN_READERS } };
  const admin = { config: { roles: CHANGERS } };
  const mails = Boolean(deps.mailer);

  const checkinsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const at = now();
    const [settings, state, rounds, counts, links, { speaker, language }] = await Promise.all([
      getCheckinSettings(db, s.orgId),
      roundNowState(db, s.orgId, at),
      roundStatuses(db, s.orgId, at),
      participation(db, s.orgId, at),
      linksFileState(db, s.orgId, at),
      speakerAndLanguageOf(db, request),
    ]);
    const canChange = CHANGERS.includes(s.member.role);
    return sendPage(reply, status, checkinsView({ session: s, settings, now: state, rounds, counts, links, mails, canChange, language, message, speaker }));
  };
  const outcome = changeOutcome(checkinsPage, () => '/console/checkins');
  const linkFor = (o: string, t: string) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}`;

  scope.get('/checkins', readers, async (request, reply) => checkinsPage(request, reply, 200));

  const saveSettings = async (request: FastifyRequest, reply: FastifyReply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      await inWords(sp, () => updateCheckinSettings(db, request.member.orgId, settingsOf(request.body as Form), actorOf(request), now()));
      return notice(sp.t('console.checkins.settingsSaved'), 'ok');
    });
  scope.post('/checkins/settings', admin, saveSettings);
  // The People page's settings form of earlier versions posts here still.
  scope.post('/people/settings', admin, saveSettings);

  // The organization's default language (issue 57). The mails read it when they go, as they read a
  // person's own language: it applies to every mail not yet sent, and the notice says so.
  scope.post('/checkins/language', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const started = (await roundNowState(db, request.member.orgId, now())).startedAt !== null;
      const locale = await inWords(sp, () => setDefaultLanguage(db, request.member.orgId, (request.body as Form).language ?? '', actorOf(request), now()));
      return notice(sp.t('console.checkins.languageSaved', { language: languageName(locale), started: started ? 'yes' : 'no' }), 'ok');
    }),
  );

  scope.get('/checkins/send', admin, async (request, reply) => {
    const s = request.member;
    const [state, settings] = await Promise.all([roundNowState(db, s.orgId, now()), getCheckinSettings(db, s.orgId)]);
    if (!mails || state.startedAt || state.people === 0) return reply.redirect('/console/checkins', 303);
    return sendPage(reply, 200, sendNowView(s, state, settings, await speakerOf(db, request)));
  });
  scope.post('/checkins/send', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      const r = await inWords(sp, () => startRoundNow(db, request.member.orgId, { mails }, actorOf(request), now()));
      return notice(sp.t('console.checkins.roundStarted', { people: r.people }), 'ok');
    }),
  );

  scope.post('/checkins/test-mail', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const sp = await speakerOf(db, request);
      if (!deps.mailer) throw new ApiError('invalid_transition', sp.t('console.checkins.errNoSmtpTest'));
      const to = request.member.member.email;
      await inWords(sp, () =>
        sendTestMail(
          db,
          request.member.orgId,
          { to, send: (m) => deps.mailer!.send(m), previewLink: `${deps.baseUrl}/console/checkins/test-link` },
          actorOf(request),
          now(),
        ),
      );
      return notice(sp.t('console.checkins.testSent', { email: to }), 'ok');
    }),
  );
  scope.get('/checkins/test-link', readers, async (request, reply) => {
    const s = request.member;
    const state = await roundNowState(db, s.orgId, now());
    return sendPage(reply, 200, testLinkView(s, await getCheckinSettings(db, s.orgId), state.week, await speakerOf(db, request)));
  });

  // A file download, not a change shown on a page: the links exist in this answer only. A refusal
  // (mail is on; the links were handed out and new ones were not asked for) is the page, saying why.
  const links = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const renew = (request.body as Form).renew === '1';
      const { week, links } = await exportWeekLinks(db, request.member.orgId, { linkFor, mails, renew }, actorOf(request), now());
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-links-${week}.csv"`).send(linksCsv(links));
    } catch (err) {
      if (err instanceof ApiError && err.statusCode < 500) {
        return checkinsPage(request, reply, err.statusCode, notice(spoken(err, await speakerOf(db, request)).message));
      }
      throw err;
    }
  };
  scope.post('/checkins/links', admin, links);
  scope.post('/people/links', admin, links);
}
