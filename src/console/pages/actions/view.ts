import type { Action } from '../../../contract/schemas/actions.js';
import type { ConsoleSession } from '../../../domain/sessions.js';
import { csrfField, html, type PageOptions, type Safe } from '../../html.js';
import { navFor } from '../../views/nav.js';
import { PLAIN, type Speaker } from '../../words.js';

const STATUSES = ['active', 'done', 'cancelled'] as const;

export interface ActionsData {
  session: ConsoleSession;
  /** The newest actions, newest first; `more`: older ones exist. */
  actions: Action[];
  more: boolean;
  teams: { id: string; name: string }[];
  message?: Safe;
  /** Dates in the reader's locale and the organization's time zone (PLAIN: en-GB, UTC). */
  speaker?: Speaker;
  /** A manager's page: their teams' actions only. */
  scoped?: boolean;
}

/** The actions page: every action, newest first, and for admins and owners the create and edit forms. */
export function actionsView({ session: s, actions, more, teams, message, speaker: sp = PLAIN, scoped = false }: ActionsData): PageOptions {
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
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
  return {
    title: 'Actions',
    nav: navFor(s, '/console/actions'),
    body: html`<h1>Actions</h1>
${message ?? ''}
${
  scoped
    ? html`<p>Improvement actions of the teams you manage, newest first. Actions of other teams, and of the whole organization, are not shown here.</p>`
    : html`<p>Improvement actions of ${s.orgName}, newest first, as <code>GET /v1/actions</code> lists them${more ? ` (the ${actions.length} newest; GET /v1/actions lists every one)` : ''}. A done or cancelled action is reopened by setting it active again.</p>`
}
${
  actions.length === 0
    ? html`<p>No actions yet.</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="actions-caption" tabindex="0"><table>
<caption id="actions-caption">Actions, newest first</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Team</th><th scope="col">Started</th><th scope="col">Ends</th><th scope="col">Description</th></tr></thead>
<tbody>${actions.map(
        (a, i) =>
          html`<tr><td class="wrap"><bdi>${a.title}</bdi>${canChange ? editForm(a, i) : ''}</td><td>${a.status}</td><td><bdi>${a.subteamName ?? ''}</bdi></td><td>${sp.when(a.startDate)}</td><td>${sp.when(a.endDate, '')}</td><td class="wrap"><bdi>${a.description ?? ''}</bdi></td></tr>`,
      )}</tbody>
</table></div>`
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
    : html`<p class="muted">${scoped ? 'Managers' : 'Viewers'} can read actions but not make or change them.</p>`
}`,
  };
}
