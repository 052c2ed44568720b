import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../../domain/database.js';
import type { RollDelay } from '../../../domain/keys.js';
import { createScimToken, getScimTeamFrom, listOrgScimTokens, revokeScimToken, rollScimToken, setScimTeamFrom } from '../../../domain/scim.js';
import { html, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { refusalsInWords, saidNotice, secretBox, sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { provisioningRefusal, provisioningView } from './view.js';

/**
 * The Provisioning page (issue 56): owners and admins make, replace and revoke the organization's
 * SCIM tokens (each shown once) and choose how its people find their team; each change is the
 * domain operation the operator API and the CLI call.
 */
export function registerProvisioningPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };
  const scimUrl = `${deps.baseUrl}/scim/v2`;

  const page = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const [tokens, teamFrom, speaker] = await Promise.all([listOrgScimTokens(db, s.orgId, now()), getScimTeamFrom(db, s.orgId), speakerOf(db, request)]);
    return sendPage(reply, status, provisioningView({ session: s, tokens, teamFrom, scimUrl, message, speaker }));
  };
  const outcome = refusalsInWords(changeOutcome(page), page, async (err, request) => html`${provisioningRefusal(err, (await speakerOf(db, request)).t)}`);
  const shownOnce = (sp: Speaker, secret: string, heading: string) =>
    secretBox({ id: 'new-token', heading, secret, label: sp.t('console.provisioning.newToken'), copy: sp.t('console.provisioning.copy') }, sp);

  scope.get('/provisioning', admin, async (request, reply) => page(request, reply, 200));

  scope.post('/provisioning/tokens', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const t = await createScimToken(db, request.member.orgId, { name: ((request.body as Form).name ?? '').trim() }, actorOf(request), now());
      const sp = await speakerOf(db, request);
      return shownOnce(sp, t.token, sp.t('console.provisioning.createdHeading', { name: t.name ?? t.prefix }));
    }),
  );

  scope.post<{ Params: { tokenId: string } }>('/provisioning/tokens/:tokenId/roll', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const delay = ((request.body as Form).expiresIn || '24h') as RollDelay;
      const t = await rollScimToken(db, request.member.orgId, request.params.tokenId, delay, actorOf(request), now());
      const sp = await speakerOf(db, request);
      return shownOnce(sp, t.token, sp.t('console.provisioning.rolledHeading', { name: t.name ?? t.prefix, when: sp.when(t.oldExpiresAt) }));
    }),
  );

  scope.post<{ Params: { tokenId: string } }>('/provisioning/tokens/:tokenId/revoke', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const t = await revokeScimToken(db, request.member.orgId, request.params.tokenId, actorOf(request), now());
      return saidNotice(html`${(await speakerOf(db, request)).t('console.provisioning.revoked', { name: t.name ?? t.prefix })}`);
    }),
  );

  scope.post('/provisioning/teams', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await setScimTeamFrom(db, request.member.orgId, (request.body as Form).teamFrom, actorOf(request), now());
      return saidNotice(html`${(await speakerOf(db, request)).t('console.provisioning.saved')}`);
    }),
  );
}
