import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../contract/errors.js';
import type { DatabaseExecutor } from '../../../domain/database.js';
import { createAction, editAction, findActionItem, listRecentActionItems } from '../../../domain/actions.js';
import { listOrgTeams } from '../../../domain/teams.js';
import {
  CreateActionBodySchema,
  UpdateActionBodySchema,
  type Action,
  type CreateActionBody,
  type UpdateActionBody,
} from '../../../contract/schemas/actions.js';
import { csrfField, html, notice, type Safe } from '../../html.js';
import { actorOf, asApiRequest, CHANGERS, changeOutcome, type ConsoleDeps, type Form } from '../../plugins/index.js';
import { navFor } from '../../views/nav.js';
import { sendPage, when } from '../../views/layout.js';

const STATUSES = ['active', 'done', 'cancelled'] as const;
/** The page lists the newest actions; GET /v1/actions has them all. */
const PAGE_ACTIONS = 100;

/** A form's end date (a calendar day) as the API's endDate: the end of that day, UTC. */
const endOfDay = (date: string) => (/^\d{4}-\d\d-\d\d$/.test(date) ? `${date}T23:59:59.999Z` : date);

/** The create form as POST /v1/actions' body: empty optional fields are left out. */
function createBody(form: Form): CreateActionBody {
  const body: Record<string, unknown> = { title: form.title ?? '' };
  if (form.description) body.description = form.description;
  if (form.endDate) body.endDate = endOfDay(form.endDate);
  if (form.subteamId) body.subteamId = form.subteamId;
  return asApiRequest<CreateActionBody>(CreateActionBodySchema, body);
}

/** The edit form as PATCH /v1/actions/{id}'s body: only the fields whose value the form changes; empty clears. */
function changeBody(form: Form, current: Action): UpdateActionBody | null {
  const body: Record<string, unknown> = {};
  if (form.title !== undefined && form.title !== current.title) body.title = form.title;
  const description = form.description ? form.description : null;
  if (form.description !== undefined && description !== current.description) body.description = description;
  if (form.endDate !== undefined && form.endDate !== (current.endDate ?? '').slice(0, 10)) body.endDate = form.endDate ? endOfDay(form.endDate) : null;
  const team = form.subteamId ? form.subteamId : null;
  if (form.subteamId !== undefined && team !== current.subteamId) body.subteamId = team;
  if (form.status !== undefined && form.status !== current.status) body.status = form.status;
  return Object.keys(body).length === 0 ? null : asApiRequest<UpdateActionBody>(UpdateActionBodySchema, body);
}

/**
 * The actions page (CONTRACT.md section 11): every action, newest first; admins and owners create,
 * edit and move them through the transitions of section 5, by the operations POST and PATCH
 * /v1/actions use, with the API's checks and messages.
 */
export function registerActionPages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor }) {
  const { db, now } = deps;

  const actionsPage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.member;
    const canChange = s.member.role !== 'viewer';
    const [{ items: actions, more }, teams] = await Promise.all([listRecentActionItems(db, s.orgId, PAGE_ACTIONS), listOrgTeams(db, s.orgId)]);
    const teamSelect = (id: string, selected: string | null) =>
      html`<select name="subteamId" id="${id}"><option value="">(no team)</option>${teams.map(
        (t) => html`<option value="${t.id}"${t.id === selected ? html` selected` : ''}>${t.name}</option>`,
      )}</select>`;
    const editForm = (a: Action, i: number) => html`<details><summary>Edit <bdi>${a.title}</bdi></summary>
<form method="post" action="/console/actions/${encodeURIComponent(a.$id)}" class="stack">
${csrfField(s.csrfToken)}
<label for="e-title-${i}">Title</label> <input name="title" id="e-title-${i}" value="${a.title}" required minlength="2" maxlength="120">
<label for="e-description-${i}">Description</label> <input name="description" id="e-description-${i}" value="${a.description ?? ''}" maxlength="500">
<label for="e-team-${i}">Team</label> ${teamSelect(`e-team-${i}`, a.subteamId)}
<label for="e-end-${i}">Ends (optional)</label> <input type="date" name="endDate" id="e-end-${i}" value="${(a.endDate ?? '').slice(0, 10)}">
<label for="e-status-${i}">Status</label> <select name="status" id="e-status-${i}">${STATUSES.map((st) => html`<option value="${st}"${st === a.status ? html` selected` : ''}>${st}</option>`)}</select>
<button type="submit">Save action</button>
</form></details>`;
    return sendPage(reply, status, {
      title: 'Actions',
      nav: navFor(s, '/console/actions'),
      body: html`<h1>Actions</h1>
${message ?? ''}
<p>Improvement actions of ${s.orgName}, newest first, as <code>GET /v1/actions</code> lists them${more ? ` (the ${actions.length} newest; GET /v1/actions lists every one)` : ''}. A done or cancelled action is reopened by setting it active again.</p>
${
  actions.length === 0
    ? html`<p>No actions yet.</p>`
    : html`<table>
<caption>Actions, newest first</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Team</th><th scope="col">Started</th><th scope="col">Ends</th><th scope="col">Description</th></tr></thead>
<tbody>${actions.map(
        (a, i) =>
          html`<tr><td class="wrap"><bdi>${a.title}</bdi>${canChange ? editForm(a, i) : ''}</td><td>${a.status}</td><td><bdi>${a.subteamName ?? ''}</bdi></td><td>${when(a.startDate)}</td><td>${when(a.endDate, '')}</td><td class="wrap"><bdi>${a.description ?? ''}</bdi></td></tr>`,
      )}</tbody>
</table>`
}
${
  canChange
    ? html`<h2>Create action</h2>
<form method="post" action="/console/actions" class="stack">
${csrfField(s.csrfToken)}
<label for="f-title">Title</label> <input name="title" id="f-title" required minlength="2" maxlength="120">
<label for="f-description">Description (optional)</label> <input name="description" id="f-description" maxlength="500">
<label for="f-team">Team (optional)</label> ${teamSelect('f-team', null)}
<label for="f-end">Ends (optional)</label> <input type="date" name="endDate" id="f-end">
<button type="submit">Create action</button>
</form>`
    : html`<p class="muted">Viewers can read actions but not make or change them.</p>`
}`,
    });
  };
  const outcome = changeOutcome(actionsPage);
  const admin = { config: { roles: CHANGERS } };

  scope.get('/actions', async (request, reply) => actionsPage(request, reply, 200));

  scope.post<{ Body: Form }>('/actions', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const body = createBody(request.body);
      await db.transaction((tx) => createAction(tx, request.member.orgId, body, actorOf(request), now()));
      return notice(`Action “${body.title}” created.`, 'ok');
    }),
  );

  scope.post<{ Params: { actionId: string }; Body: Form }>('/actions/:actionId', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const orgId = request.member.orgId;
      const current = await findActionItem(db, orgId, request.params.actionId);
      if (!current) throw new ApiError('not_found', 'No such action in this organization.');
      const body = changeBody(request.body, current);
      if (!body) return notice('Nothing to change.', 'ok');
      await db.transaction((tx) => editAction(tx, orgId, current.$id, body, actorOf(request), now()));
      return notice(`Action “${body.title ?? current.title}” saved.`, 'ok');
    }),
  );
}
