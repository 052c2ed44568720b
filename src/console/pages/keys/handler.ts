import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createOrgKey, listOrgKeys, revokeOrgKey, rollOrgKey, ROLL_DELAYS, type RollDelay } from '../../../domain/keys.js';
import type { KeyListing } from '../../../contract/schemas/admin-keys.js';
import { csrfField, html, notice, page, type Safe } from '../../html.js';
import { actorOf, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { when } from '../../views/layout.js';


type ConsoleKey = KeyListing & { state: 'active' | 'expired' | 'revoked' };

/** A key's state as the page shows it, at `now`. */
function stateOf(k: KeyListing, now: Date): ConsoleKey['state'] {
  if (k.revokedAt !== null) return 'revoked';
  return k.expiresAt !== null && Date.parse(k.expiresAt) <= now.getTime() ? 'expired' : 'active';
}

/** The form's optional expiry: a calendar date (midnight UTC starts it). */
function expiryOf(text: string | undefined): string | null {
  if (!text) return null;
  if (!/^\d{4}-\d\d-\d\d$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00.000Z`))) throw new ApiError('invalid_request', 'The expiry must be a date (YYYY-MM-DD).');
  return `${text}T00:00:00.000Z`;
}

/** The API keys page (CONTRACT.md section 11): every member reads it; admins and owners change keys. */
export function registerKeyPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;
  const admin = { config: { roles: CHANGERS } };

  const keysPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const canChange = s.member.role !== 'viewer';
    const at = now();
    const keys: ConsoleKey[] = (await listOrgKeys(db, s.orgId)).map((k) => ({ ...k, state: stateOf(k, at) })).reverse();
    const row = (k: ConsoleKey) => html`<tr>
<td>${k.name ?? '(no name)'}</td><td><code>${k.prefix}…</code></td><td>${k.scope === 'read' ? 'read' : 'read and write'}</td><td>${k.createdBy ?? 'unknown'}</td>
<td>${when(k.createdAt)}</td><td>${when(k.lastUsedAt)}</td><td>${when(k.expiresAt)}</td><td>${k.state}</td>
<td>${canChange && k.state === 'active'
  ? html`<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/roll">${csrfField(s.csrfToken)}
<label for="f-expiresIn-${k.id}">Old key of ${k.name ?? k.prefix} expires</label> <select name="expiresIn" id="f-expiresIn-${k.id}">${ROLL_DELAYS.map((d) => html`<option value="${d.value}">${d.label}</option>`)}</select>
<button type="submit" class="secondary">Roll</button></form>
<form method="post" action="/console/keys/${encodeURIComponent(k.id)}/revoke" data-confirm="Revoke ${k.name ?? k.prefix}? Clients using it get 401 within 5 seconds.">${csrfField(s.csrfToken)}
<button type="submit" class="danger" aria-label="Revoke ${k.name ?? k.prefix}">Revoke</button></form>`
  : ''}</td></tr>`;
    return reply.code(status).type('text/html; charset=utf-8').send(
      page({
        title: 'API keys',
        nav: navFor(s, '/console/keys'),
        body: html`<h1>API keys</h1>
${message ?? ''}
<p>Keys let programs read your organization's data through the REST API (<code>/v1</code>). A key is shown once, when it is made.</p>
${keys.length === 0
  ? html`<p>No keys yet.</p>`
  : html`<div class="table-scroll" role="region" aria-labelledby="keys-caption" tabindex="0"><table>
<caption id="keys-caption">Keys of ${s.orgName}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scope</th><th scope="col">Creator</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col">Change</th></tr></thead>
<tbody>${keys.map(row)}</tbody>
</table></div>`}
${canChange
  ? html`<h2>Create key</h2>
<form method="post" action="/console/keys" class="stack">
${csrfField(s.csrfToken)}
<label for="f-name">Name</label> <input name="name" required maxlength="128" id="f-name">
<label for="f-scope">Scope</label> <select name="scope" id="f-scope"><option value="read" selected>read: GET only</option><option value="read_write">read_write: read and write</option></select>
<label for="f-expires">Expires (optional)</label> <input type="date" name="expires" id="f-expires">
<button type="submit">Create key</button>
</form>`
  : html`<p class="muted">Viewers can see keys but not make or change them.</p>`}`,
      }),
    );
  };

  const shownOnce = (request: FastifyRequest, secret: string, what: string) => {
    const base = deps.baseUrl;
    return html`<section class="notice ok" role="status" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">${what}</h2>
<p>Copy it now: it is shown only once.</p>
<code class="secret" id="new-key" role="textbox" aria-readonly="true" aria-label="New API key">${secret}</code>
<button type="button" class="secondary" data-copy="new-key" hidden>Copy key</button>
<p>Try it:</p>
<code class="secret" id="curl-line" aria-label="Example curl command">curl -s -H "Authorization: Bearer ${secret}" ${base}/v1/stats</code>
</section>`;
  };

  const outcome = changeOutcome(keysPage);

  scope.get('/keys', async (request, reply) => keysPage(request, reply, 200));

  scope.post('/keys', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const form = request.body as Form;
      const scopeValue = form.scope === 'read' ? 'read' : form.scope === 'read_write' ? 'read_write' : null;
      if (!scopeValue) throw new ApiError('invalid_request', 'The scope must be read or read_write.');
      const name = (form.name ?? '').trim();
      if (name.length < 1 || name.length > 128) throw new ApiError('invalid_request', 'The name must be 1-128 characters.');
      const key = await createOrgKey(db, request.member.orgId, { name, scope: scopeValue, expiresAt: expiryOf(form.expires) }, actorOf(request), now());
      return shownOnce(request, key.key, `Key ${key.name ?? key.prefix} created`);
    }),
  );

  scope.post<{ Params: { keyId: string } }>('/keys/:keyId/roll', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const rolled = await rollOrgKey(db, request.member.orgId, request.params.keyId, (request.body as Form).expiresIn as RollDelay, actorOf(request), now());
      return shownOnce(request, rolled.key, `Key ${rolled.name ?? rolled.prefix} rolled; the old one expires ${when(rolled.oldExpiresAt)}`);
    }),
  );

  scope.post<{ Params: { keyId: string } }>('/keys/:keyId/revoke', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      // By id only: the console names keys exactly (the CLI's prefix shortcut is not needed here).
      const listed = (await listOrgKeys(db, request.member.orgId)).find((k) => k.id === request.params.keyId);
      if (!listed) throw new ApiError('not_found', 'No such key in this organization.');
      const k = await revokeOrgKey(db, request.member.orgId, listed.id, actorOf(request), now());
      return notice(`Key ${k.name ?? k.prefix} revoked: clients using it get 401 within 5 seconds.`, 'ok');
    }),
  );
}
