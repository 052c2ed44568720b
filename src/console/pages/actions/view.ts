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
  const { t } = sp;
  const canChange = s.member.role === 'owner' || s.member.role === 'admin';
  const teamSelect = (id: string, selected: string | null) =>
    html`<select name="subteamId" id="${id}"><option value="">${t('console.actions.noTeam')}</option>${teams.map(
      (team) => html`<option value="${team.id}"${team.id === selected ? html` selected` : ''}>${team.name}</option>`,
    )}</select>`;
  const bdi = (chunks: Safe) => html`<bdi>${chunks}</bdi>`;
  const code = (chunks: Safe) => html`<code>${chunks}</code>`;
  const editForm = (a: Action, i: number) => html`<details><summary>${sp.rich('console.actions.edit', { title: a.title }, { bdi })}</summary>
<form method="post" action="/console/actions/${encodeURIComponent(a.$id)}" class="stack">
${csrfField(s.csrfToken)}
<label for="e-title-${i}">${t('console.actions.fieldTitle')}</label> <input name="title" id="e-title-${i}" value="${a.title}" required minlength="2" maxlength="120">
<label for="e-description-${i}">${t('console.actions.fieldDescription')}</label> <input name="description" id="e-description-${i}" value="${a.description ?? ''}" maxlength="500">
<label for="e-team-${i}">${t('console.actions.fieldTeam')}</label> ${teamSelect(`e-team-${i}`, a.subteamId)}
<label for="e-end-${i}">${t('console.actions.fieldEnds')}</label> <input type="date" name="endDate" id="e-end-${i}" value="${(a.endDate ?? '').slice(0, 10)}">
<label for="e-status-${i}">${t('console.actions.fieldStatus')}</label> <select name="status" id="e-status-${i}">${STATUSES.map((st) => html`<option value="${st}"${st === a.status ? html` selected` : ''}>${t('console.actions.status', { status: st })}</option>`)}</select>
<button type="submit">${t('console.actions.save')}</button>
</form></details>`;
  return {
    title: t('console.actions.title'),
    speaker: sp,
    nav: navFor(s, '/console/actions'),
    body: html`<h1>${t('console.actions.title')}</h1>
${message ?? ''}
${
  scoped
    ? html`<p>${t('console.actions.introTeams')}</p>`
    : html`<p>${sp.rich(
        'console.actions.intro',
        { org: html`<bdi>${s.orgName}</bdi>`, list: 'GET /v1/actions', more: more ? 'yes' : 'no', shown: actions.length },
        { code },
      )}</p>`
}
${
  actions.length === 0
    ? html`<p>${t('console.actions.none')}</p>`
    : html`<div class="table-scroll" role="region" aria-labelledby="actions-caption" tabindex="0"><table>
<caption id="actions-caption">${t('console.actions.caption')}</caption>
<thead><tr><th scope="col">${t('console.actions.fieldTitle')}</th><th scope="col">${t('console.actions.fieldStatus')}</th><th scope="col">${t('console.actions.fieldTeam')}</th><th scope="col">${t('console.actions.colStarted')}</th><th scope="col">${t('console.actions.colEnds')}</th><th scope="col">${t('console.actions.fieldDescription')}</th></tr></thead>
<tbody>${actions.map(
        (a, i) =>
          html`<tr><td class="wrap"><bdi>${a.title}</bdi>${canChange ? editForm(a, i) : ''}</td><td>${t('console.actions.status', { status: a.status })}</td><td><bdi>${a.subteamName ?? ''}</bdi></td><td>${sp.when(a.startDate, '')}</td><td>${sp.when(a.endDate, '')}</td><td class="wrap"><bdi>${a.description ?? ''}</bdi></td></tr>`,
      )}</tbody>
</table></div>`
}
${
  canChange
    ? html`<h2>${t('console.actions.create')}</h2>
<form method="post" action="/console/actions" class="stack">
${csrfField(s.csrfToken)}
<label for="f-title">${t('console.actions.fieldTitle')}</label> <input name="title" id="f-title" required minlength="2" maxlength="120">
<label for="f-description">${t('console.actions.fieldDescriptionOptional')}</label> <input name="description" id="f-description" maxlength="500">
<label for="f-team">${t('console.actions.fieldTeamOptional')}</label> ${teamSelect('f-team', null)}
<label for="f-end">${t('console.actions.fieldEnds')}</label> <input type="date" name="endDate" id="f-end">
<button type="submit">${t('console.actions.create')}</button>
</form>`
    : html`<p class="muted">${scoped ? t('console.actions.managers') : t('console.actions.viewers')}</p>`
}`,
  };
}
