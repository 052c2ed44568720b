import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseExecutor } from '../../domain/database.js';
import { addRespondent, listRoster, MIN_TEAM, moveRespondent, removeRespondent, replaceRoster } from '../../domain/checkins/roster.js';
import { readSettings, updateCheckinSettings } from '../../domain/checkins/settings.js';
import { exportWeekLinks, participation } from '../../domain/checkins/rounds.js';
import { CheckinKeys } from '../../domain/checkins/keys.js';
import { serviceSecretOf } from '../../domain/checkins/secret.js';
import { csrfField, html, notice, page, type Safe } from '../html.js';
import { actorOf, changeOutcome, requireRole, type ConsoleDeps, type Form } from '../plugins.js';
import { navFor } from './nav.js';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const csvCell = (v: string) => (/[",\n\r]/.test(v) || /^[=+\-@\t]/.test(v) ? `"${v.replace(/^([=+\-@\t])/, "'$1").replace(/"/g, '""')}"` : v);

/**
 * The People page (CONTRACT.md section 12): the check-in roster (add, move, remove, replace from
 * CSV), the round's settings and word list, the week's links without SMTP, and participation
 * counts shown only from 5. Owners and admins; every change is the operator API's domain call.
 */
export function registerPeoplePages(scope: FastifyInstance, deps: ConsoleDeps & { db: DatabaseExecutor; mailer?: unknown }) {
  const { db, now } = deps;
  let keys: CheckinKeys | undefined;

  const peoplePage = async (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => {
    const s = request.consoleSession!;
    const [roster, settings, counts] = await Promise.all([listRoster(db, s.orgId), readSettings(db, s.orgId), participation(db, s.orgId, now())]);
    const csrf = csrfField(s.csrfToken);
    const count = (n: number | null) => (n === null ? `fewer than ${MIN_TEAM}` : String(n));
    return reply.code(status).type('text/html; charset=utf-8').send(
      page({
        title: 'People',
        nav: navFor(s, '/console/people'),
        body: html`<h1>People</h1>
${message ?? ''}
<p>The people asked the weekly check-in “How was your week?”. They are not members of the console: each gets a personal link by email every week, and answers anonymously (<a href="/checkin/about">how it works</a>).</p>
<p class="notice ok" role="note">A team with fewer than ${MIN_TEAM} people on this roster answers without a team: its answers count for the whole organization and show no team, since in a team that small the answers could be told apart.</p>
<h2>Roster</h2>
${roster.respondents.length === 0
  ? html`<p>No one yet. Add people below, or replace the roster from a CSV file.</p>`
  : html`<div class="table-scroll"><table>
<caption>${roster.respondents.length} people</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Team</th><th scope="col">Answers as</th><th scope="col">Change</th></tr></thead>
<tbody>${roster.respondents.map(
  (r, i) => html`<tr><td class="wrap"><bdi>${r.email}</bdi></td><td><bdi>${r.teamName ?? ''}</bdi></td><td>${r.answersWithTeam ? html`team <bdi>${r.teamName ?? ''}</bdi>` : 'the organization (no team)'}</td><td>
<form method="post" action="/console/people/${encodeURIComponent(r.id)}/move">${csrf}<label class="visually-hidden" for="m-${i}">New team for ${r.email}</label><input name="team" id="m-${i}" value="${r.teamName ?? ''}" maxlength="80"><button type="submit" class="secondary">Move</button></form>
<form method="post" action="/console/people/${encodeURIComponent(r.id)}/remove" data-confirm="Remove ${r.email} from the roster?">${csrf}<button type="submit" class="danger" aria-label="Remove ${r.email}">Remove</button></form>
</td></tr>`,
)}</tbody></table></div>`}
${roster.teams.length > 0
  ? html`<table><caption>Teams on the roster</caption><thead><tr><th scope="col">Team</th><th scope="col">People</th><th scope="col">Answers</th></tr></thead>
<tbody>${roster.teams.map((t) => html`<tr><td><bdi>${t.name}</bdi></td><td>${t.respondents}</td><td>${t.answersAsTeam ? 'as the team' : `without a team (fewer than ${MIN_TEAM})`}</td></tr>`)}</tbody></table>`
  : ''}
<h2>Add a person</h2>
<form method="post" action="/console/people" class="stack">
${csrf}
<label for="p-email">Email</label> <input type="email" name="email" id="p-email" required maxlength="254" autocomplete="off">
<label for="p-team">Team (optional)</label> <input name="team" id="p-team" maxlength="80">
<button type="submit">Add person</button>
</form>
<h2>Replace the roster from CSV</h2>
<form method="post" action="/console/people/replace" class="stack">
${csrf}
<label for="p-csv">CSV, one <code>email,team</code> per line (a header line <code>email,team</code> is allowed). The whole file is checked before anything changes.</label>
<textarea name="csv" id="p-csv" rows="6" required></textarea>
<button type="submit">Replace roster</button>
</form>
<h2>This week's links</h2>
${deps.mailer
  ? html`<p>Links go by email on ${WEEKDAYS[settings.weekday - 1]} at ${String(settings.hour).padStart(2, '0')}:00 (${settings.timeZone}).</p>`
  : html`<p>This server sends no mail (SMTP_URL is not set). Download the week's links as a CSV file for your own mail tool. Whoever holds the file can answer in someone's place, though still learn no answer. Each download makes new links for everyone who has not opened theirs; earlier files stop working.</p>
<form method="post" action="/console/people/links">${csrf}<button type="submit">Download this week's links (CSV)</button></form>`}
<h2>Check-in settings</h2>
<form method="post" action="/console/people/settings" class="stack">
${csrf}
<label for="s-weekday">Day of the round</label> <select name="weekday" id="s-weekday">${WEEKDAYS.map((d, i) => html`<option value="${i + 1}"${i + 1 === settings.weekday ? html` selected` : ''}>${d}</option>`)}</select>
<label for="s-hour">Hour (0-23)</label> <input type="number" name="hour" id="s-hour" min="0" max="23" value="${settings.hour}" required>
<label for="s-tz">Time zone</label> <input name="timeZone" id="s-tz" value="${settings.timeZone}" required maxlength="64">
<label for="s-reminder">Reminder day</label> <select name="reminderWeekday" id="s-reminder"><option value="">No reminder</option>${WEEKDAYS.map((d, i) => html`<option value="${i + 1}"${i + 1 === settings.reminderWeekday ? html` selected` : ''}>${d}</option>`)}</select>
<label for="s-reasons">Reasons offered, one per line (optional)</label> <textarea name="reasons" id="s-reasons" rows="4">${settings.reasons.join('\n')}</textarea>
<label for="s-words">Words that make an answer arrive flagged, one per line</label> <textarea name="flagWords" id="s-words" rows="4">${settings.flagWords.join('\n')}</textarea>
<button type="submit">Save check-in settings</button>
</form>
<h2>Participation</h2>
${counts.length === 0
  ? html`<p>No round yet.</p>`
  : html`<div class="table-scroll"><table><caption>Per week and team; each count shown only from ${MIN_TEAM}</caption>
<thead><tr><th scope="col">Week of</th><th scope="col">Team</th><th scope="col">Invited</th><th scope="col">Opened</th><th scope="col">Answered</th></tr></thead>
<tbody>${counts.map((c) => html`<tr><td>${c.week}</td><td><bdi>${c.teamName ?? '(no team)'}</bdi></td><td>${count(c.invited)}</td><td>${count(c.opened)}</td><td>${count(c.answered)}</td></tr>`)}</tbody></table></div>`}`,
      }),
    );
  };
  const outcome = changeOutcome(peoplePage);
  const admin = { preHandler: requireRole('owner', 'admin'), schema: { hide: true } };
  const lines = (v: string | undefined) => (v ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

  scope.get('/people', admin, async (request, reply) => peoplePage(request, reply, 200));

  scope.post<{ Body: Form }>('/people', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await addRespondent(db, request.consoleSession!.orgId, { email: request.body.email ?? '', team: request.body.team || null }, actorOf(request), now());
      return notice(`${(request.body.email ?? '').trim()} added.`, 'ok');
    }),
  );
  scope.post<{ Params: { id: string }; Body: Form }>('/people/:id/move', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await moveRespondent(db, request.consoleSession!.orgId, request.params.id, request.body.team || null, actorOf(request), now());
      return notice('Team changed; it applies from the next round.', 'ok');
    }),
  );
  scope.post<{ Params: { id: string }; Body: Form }>('/people/:id/remove', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      await removeRespondent(db, request.consoleSession!.orgId, request.params.id, actorOf(request), now());
      return notice('Removed from the roster.', 'ok');
    }),
  );
  scope.post<{ Body: Form }>('/people/replace', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const r = await replaceRoster(db, request.consoleSession!.orgId, request.body.csv ?? '', actorOf(request), now());
      return notice(`Roster replaced: ${r.added} added, ${r.removed} removed, ${r.moved} moved, ${r.unchanged} unchanged.`, 'ok');
    }),
  );
  scope.post<{ Body: Form }>('/people/settings', admin, async (request, reply) =>
    outcome(request, reply, async () => {
      const f = request.body;
      await updateCheckinSettings(db, request.consoleSession!.orgId, {
        weekday: Number(f.weekday), hour: Number(f.hour), timeZone: f.timeZone ?? '', reminderWeekday: f.reminderWeekday ? Number(f.reminderWeekday) : null,
        reasons: lines(f.reasons), flagWords: lines(f.flagWords),
      }, actorOf(request), now());
      return notice('Check-in settings saved.', 'ok');
    }),
  );
  // A file download, not a change shown on a page: the links exist in this answer only.
  scope.post<{ Body: Form }>('/people/links', admin, async (request, reply) => {
    keys ??= new CheckinKeys(await serviceSecretOf(db));
    const { week, links } = await exportWeekLinks(db, keys, request.consoleSession!.orgId, { linkFor: (o, t) => `${deps.baseUrl}/checkin/o/${encodeURIComponent(o)}#${t}` }, actorOf(request), now());
    const csv = ['email,team,link', ...links.map((l) => [l.email, l.team ?? '', l.link].map(csvCell).join(','))].join('\r\n') + '\r\n';
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="checkin-links-${week}.csv"`).send(csv);
  });
}
