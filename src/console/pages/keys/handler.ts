import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createOrgKey, listOrgKeys, revokeOrgKey, rollOrgKey } from '../../../domain/keys.js';
import { listMembers } from '../../../domain/members.js';
import { html, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { refusalsInWords, saidNotice, secretBox, sendPage } from '../../views/layout.js';
import { speakerOf } from '../../views/speaker.js';
import type { Speaker } from '../../words.js';
import { keyRefusal, newKeyOf, rollDelayOf } from './form.js';
import { creatorForViewer, keysView, stateOf, type ConsoleKey } from './view.js';

/** The API keys page (CONTRACT.md section 11): every member reads it; admins and owners change keys. */
export function registerKeyPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const keysPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const at = now();
    const speaker = await speakerOf(db, request);
    let keys: ConsoleKey[] = (await listOrgKeys(db, s.orgId)).map((k) => ({ ...k, state: stateOf(k, at) })).reverse();
    if (s.member.role === 'viewer') {
      // Members' emails are for owners (CONTRACT.md section 11): a viewer's page never receives one.
      const roles = new Map((await listMembers(db, s.orgId)).map((m) => [m.email.toLowerCase(), m.role]));
      keys = keys.map((k) => ({ ...k, createdBy: creatorForViewer(k.createdBy, roles, speaker.t) }));
    }
    return sendPage(reply, status, keysView({ session: s, keys, message, speaker }));
  };

  const shownOnce = (sp: Speaker, secret: string, heading: string) =>
    secretBox(
      {
        id: 'new-key',
        heading,
        secret,
        label: sp.t('console.keys.newKey'),
        copy: sp.t('console.keys.copyKey'),
        extra: html`<p>${sp.t('console.keys.tryIt')}</p>
<code class="secret" id="curl-line" aria-label="${sp.t('console.keys.curlLabel')}">curl -s -H "Authorization: Bearer ${secret}" ${deps.baseUrl}/v1/stats</code>`,
      },
      sp,
    );

  const outcome = refusalsInWords(changeOutcome(keysPage), keysPage, async (err, request) => keyRefusal(err, await speakerOf(db, request)));

  scope.get('/keys', async (request, reply) => keysPage(request, reply, 200));

  scope.post('/keys', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const key = await createOrgKey(db, request.member.orgId, newKeyOf(request.body as Form), actorOf(request), now());
      const sp = await speakerOf(db, request);
      return shownOnce(sp, key.key, sp.t('console.keys.createdHeading', { name: key.name ?? key.prefix }));
    }),
  );

  scope.post<{ Params: { keyId: string } }>('/keys/:keyId/roll', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const rolled = await rollOrgKey(db, request.member.orgId, request.params.keyId, rollDelayOf(request.body as Form), actorOf(request), now());
      const sp = await speakerOf(db, request);
      return shownOnce(sp, rolled.key, sp.t('console.keys.rolledHeading', { name: rolled.name ?? rolled.prefix, when: sp.when(rolled.oldExpiresAt) }));
    }),
  );

  scope.post<{ Params: { keyId: string } }>('/keys/:keyId/revoke', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      // By id only: the console names keys exactly (the CLI's prefix shortcut is not needed here).
      const listed = (await listOrgKeys(db, request.member.orgId)).find((k) => k.id === request.params.keyId);
      if (!listed) throw new ApiError('not_found', 'No such key in this organization.');
      const k = await revokeOrgKey(db, request.member.orgId, listed.id, actorOf(request), now());
      const sp = await speakerOf(db, request);
      return saidNotice(html`${sp.t('console.keys.revoked', { name: k.name ?? k.prefix })}`);
    }),
  );
}
