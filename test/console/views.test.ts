import { describe, expect, it } from 'vitest';
import type { ConsoleSession } from '../../src/domain/sessions.js';
import { page, type PageOptions } from '../../src/console/html.js';
import { overviewView } from '../../src/console/pages/overview/view.js';
import { alertsView } from '../../src/console/pages/alerts/view.js';
import { actionsView } from '../../src/console/pages/actions/view.js';
import { commentsView } from '../../src/console/pages/comments/view.js';
import { webhooksView, addedSecret } from '../../src/console/pages/webhooks/view.js';
import { accountView, invitationLinkBox, membersView } from '../../src/console/pages/members/view.js';
import { codeView, enrollView, invitationView, recoveryCodesBox, signInView } from '../../src/console/pages/sign-in/view.js';
import { keysView } from '../../src/console/pages/keys/view.js';
import { rollDelayOf } from '../../src/console/pages/keys/form.js';
import { auditView } from '../../src/console/pages/audit/view.js';

/**
 * Each view is a pure function from data to the page: given hostile text where a stranger's text
 * goes (comments, team names, action titles, key names, alert messages, URLs, emails), every page
 * shows it as text, escaped by the one template, never as markup.
 */
const HOSTILE = `<script>alert("x")</script>'&`;
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;';
const AT = new Date('2026-11-20T12:00:00.000Z');
const WHEN = '2026-11-19T08:30:00.000Z';

const session = (role: 'owner' | 'admin' | 'viewer' = 'owner', stage: ConsoleSession['stage'] = 'active'): ConsoleSession => ({
  orgId: 'org_v',
  orgName: HOSTILE,
  member: { id: 'mem_1', email: `a${HOSTILE}@x.example.com`, role, twoFactor: true, createdAt: WHEN, lastSignInAt: WHEN },
  stage,
  csrfToken: 'tok"en',
  idHash: Buffer.alloc(32),
});

/** The whole page as sent, checked for markup that came from data. */
function rendered(opts: PageOptions): string {
  const text = page(opts);
  expect(text).not.toContain('<script>alert');
  expect(text).not.toContain(`"x")`);
  expect(text).not.toMatch(/<[a-z]+[^>]*\son[a-z]+=/i);
  // The form token is an attribute value, escaped like any other.
  if (text.includes('name="_csrf"')) expect(text).toContain('name="_csrf" value="tok&quot;en"');
  return text;
}

describe('every console view escapes hostile text', () => {
  it('overview: team names, alert messages and action titles, in the insight, the heatmap and the charts', () => {
    const days = [{ date: '2026-11-19', count: 3, avg: 3.5 }];
    const rate = { invited: 8, answered: 6, rate: 0.75 };
    const text = rendered(
      overviewView({
        session: session(),
        at: AT,
        stats: {
          fromDate: '2026-11-19',
          toDate: '2026-11-20',
          organization: { from: '2026-11-19T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z', days } as never,
          teams: [
            { id: 'team_h', name: HOSTILE, count: 7, avg: 3.5, days: [...days, { date: '2026-11-20', count: 5, avg: 2 }] },
            { id: 'team_s', name: `s${HOSTILE}`, count: 1, avg: 3, days: [] },
          ],
          team: null,
          inline: true,
        },
        insight: {
          thisWeek: '2026-11-16',
          lastWeek: '2026-11-09',
          participation: {
            organization: { thisWeek: rate, lastWeek: { invited: 8, answered: null, rate: null } },
            slots: [
              { teamId: 'team_h', teamName: HOSTILE, thisWeek: rate, lastWeek: null },
              { teamId: null, teamName: null, thisWeek: { invited: null, answered: null, rate: null }, lastWeek: null },
            ],
          },
          change: { week: '2026-11-09', current: { count: 6, avg: 3.25 }, previousFrom: '2026-10-12', previous: { count: 20, avg: 3.5 } },
          high: { week: '2026-11-09', share: 0.5, previousShare: 0.55 },
          heatmap: {
            weeks: ['2026-11-16'],
            organization: [{ count: 8, avg: 3.375 }],
            teams: [
              { id: 'team_h', name: HOSTILE, cells: [{ count: 7, avg: 3.5 }] },
              { id: 'team_s', name: `s${HOSTILE}`, cells: [null] },
            ],
          },
        },
        unread: [
          {
            id: 'al_1',
            type: 'LOW_MOOD',
            message: `Mood in ${HOSTILE} averaged 2.00 in 2026-W46 (6 pulses), at or below the low-mood level of 2.50.`,
            weekISO: '2026-W46',
            subteamName: HOSTILE,
            readAt: null,
            createdAt: WHEN,
          },
          {
            id: 'al_2',
            type: 'MOOD_DROP',
            message: `Mood in ${HOSTILE} averaged 2.00 in 2026-W46, 1.10 below its 4-week average of 3.10 (6 pulses).`,
            weekISO: '2026-W46',
            subteamName: HOSTILE,
            readAt: null,
            createdAt: WHEN,
          },
          { id: 'al_3', type: HOSTILE, message: HOSTILE, weekISO: null, subteamName: HOSTILE, readAt: null, createdAt: WHEN },
        ],
        open: [{ $id: 'act_1', title: HOSTILE, subteamName: HOSTILE, endDate: null } as never],
        moreOpen: false,
      }),
    );
    expect(text).toContain(`How <bdi>${ESCAPED}</bdi> is doing`);
    // Participation as a rate, where both counts are shown; the organization's own slot in words.
    expect(text).toContain('This week (from 16 Nov 2026): 6 of 8 people answered (75%).');
    expect(text).toContain(`<tr><th scope="row"><bdi>${ESCAPED}</bdi></th><td>75% (6 of 8)</td><td>no round</td></tr>`);
    expect(text).toContain('<tr><th scope="row">Without a team (people without one, and teams under 5)</th><td>fewer than 5 answered of fewer than 5</td>');
    expect(text).toContain(
      'In the week from 9 Nov 2026, the average level was 3.25 from 6 pulses: 0.25 lower than the 3.50 of the four weeks from 12 Oct 2026 (20 pulses).',
    );
    expect(text).toContain('50% of last week&#39;s answers were 4 or 5 (good or very good), against 55% in the four weeks before.');
    // The heatmap: a row header per team, the figure in text, a hidden cell with its reason.
    expect(text).toContain(`<tr><th scope="row"><bdi>${ESCAPED}</bdi></th><td class="h h4"><b>3.5</b> 7 pulses</tr>`);
    expect(text).toContain(`<tr><th scope="row"><bdi>s${ESCAPED}</bdi></th><td class="h h0">under 5</tr>`);
    // Two alerts of one team and week are one sentence; another alert keeps its message.
    expect(text).toContain(
      `<li>Week of 9 Nov 2026, <bdi>${ESCAPED}</bdi>: mood averaged 2.00 from 6 answers, at or below the low level of 2.50 and 1.10 lower than the usual of the 4 weeks before (3.10). <span class="muted">(19 Nov 2026, 08:30 UTC)</span></li>`,
    );
    expect(text).toContain(`<li><bdi>${ESCAPED}</bdi> <span class="muted">(19 Nov 2026, 08:30 UTC)</span></li>`);
    // A team's figures under 5 pulses are words, and its chart leaves out its days under 5.
    expect(text).toContain(`<tr><td><bdi>${ESCAPED}</bdi></td><td>7</td><td>3.50</td>`);
    expect(text).toContain(`<tr><td><bdi>s${ESCAPED}</bdi></td><td colspan="2">fewer than 5 pulses: counted in the organization&#39;s total only</td>`);
    expect(text).toContain(`<figcaption>Team ${ESCAPED}</figcaption>`);
    expect(text).toContain('<tbody><tr><td><time datetime="2026-11-20">20 Nov 2026</time><td>5<td>2.00</tbody>');
    // The API lives behind the developers' disclosure only.
    const [running, developers] = text.split('<details class="developers" id="for-developers">');
    expect(running).not.toContain('GET /v1');
    expect(developers).toContain('<code>GET /v1/stats/daily?from=2026-11-19T00:00:00.000Z&amp;to=2026-11-21T00:00:00.000Z</code>');
  });

  it('alerts: one sentence per team and week, the message of any other alert, the button naming its line', () => {
    const text = rendered(
      alertsView({
        session: session('admin'),
        alerts: [
          {
            id: 'al_"1',
            type: 'MOOD_DROP',
            message: `Mood in ${HOSTILE} averaged 2.40 in 2026-W46, 0.60 below its average in 3 of the previous 4 weeks of 3.00 (9 pulses).`,
            weekISO: '2026-W46',
            subteamName: HOSTILE,
            readAt: null,
            createdAt: WHEN,
          },
          {
            id: 'al_2',
            type: 'PARTICIPATION_DROP',
            message: `Participation in ${HOSTILE} fell to 9 pulses in 2026-W46, at most 50% of its 4-week average of 20.00 pulses a week.`,
            weekISO: '2026-W46',
            subteamName: HOSTILE,
            readAt: null,
            createdAt: WHEN,
          },
          { id: 'al_3', type: HOSTILE, message: HOSTILE, weekISO: null, subteamName: HOSTILE, readAt: WHEN, createdAt: WHEN },
        ],
        shown: 50,
      }),
    );
    expect(text).toContain(
      `<td class="wrap">Week of 9 Nov 2026, <bdi>${ESCAPED}</bdi>: mood averaged 2.40 from 9 answers, 0.60 lower than the usual of 3 of the 4 weeks before (3.00); answers fell to 9, at most 50% of the usual of the 4 weeks before (20.00 a week).</td>`,
    );
    expect(text).toContain('action="/console/alerts/al_%221/read"');
    expect(text).toContain('<input type="hidden" name="with" value="al_2">');
    expect(text).toContain(`aria-label="Mark read: Week of 9 Nov 2026, ${ESCAPED}"`);
    expect(text).toContain(`<td class="wrap"><bdi>${ESCAPED}</bdi></td>`);
    expect(text).toContain(`aria-label="Mark unread: Alert: ${ESCAPED}"`);
    expect(text).not.toContain('MOOD_DROP');
    expect(text).toContain('(up to 50), newest first. The alerts of one team and week are one line. 1 unread.');
  });

  it('actions: the title, the description and the team, in the table and the edit form', () => {
    const action = {
      $id: 'act_1',
      title: HOSTILE,
      description: HOSTILE,
      status: 'active',
      subteamId: 'team_h',
      subteamName: HOSTILE,
      startDate: WHEN,
      endDate: null,
    } as never;
    const text = rendered(actionsView({ session: session('admin'), actions: [action], more: false, teams: [{ id: 'team_h', name: HOSTILE }] }));
    expect(text).toContain(`<td class="wrap"><bdi>${ESCAPED}</bdi><details><summary>Edit <bdi>${ESCAPED}</bdi></summary>`);
    expect(text).toContain(`<input name="title" id="e-title-0" value="${ESCAPED}" required minlength="2" maxlength="120">`);
    expect(text).toContain(`<option value="team_h" selected>${ESCAPED}</option>`);
  });

  it('comments: the comment, the team and the filters carried back', () => {
    const text = rendered(
      commentsView({
        session: session('admin'),
        filters: { from: HOSTILE, subteamId: 'team_h' },
        list: {
          from: '2026-11-02',
          to: '2026-11-08',
          items: [{ comment: HOSTILE }],
          nextCursor: null,
          releasedThrough: '2026-11-08',
          suppressed: false,
        } as never,
        handles: ['h"1'],
        hidden: [{ comment: HOSTILE, handle: 'h2' }],
        teams: [{ id: 'team_h', name: HOSTILE }],
        thisWeek: new Date('2026-11-16T00:00:00.000Z'),
      }),
    );
    expect(text).toContain(`<h2>Team <bdi>${ESCAPED}</bdi>: comments of the weeks 2 Nov 2026 to 8 Nov 2026</h2>`);
    expect(text).toContain(`<li><bdi>${ESCAPED}</bdi><form method="post" action="/console/comments/hide">`);
    expect(text).toContain(`<input type="hidden" name="from" value="${ESCAPED}">`);
    expect(text).toContain('<input type="hidden" name="handle" value="h&quot;1">');
  });

  it("webhooks: the endpoint's URL, the delivery's error and the new secret's box", () => {
    const url = `https://hooks.example.com/${HOSTILE}`;
    const endpoint = {
      id: 'we_1',
      orgId: 'org_v',
      url,
      eventTypes: ['alert.created'],
      enabled: false,
      disabledReason: HOSTILE,
      createdAt: WHEN,
      previousSecretExpiresAt: null,
    } as never;
    const delivery = {
      id: 'wd_1',
      endpointId: 'we_1',
      eventId: 'evt_1',
      type: 'alert.created',
      status: 'failed',
      attempts: 1,
      lastStatusCode: null,
      lastError: HOSTILE,
      nextAttemptAt: null,
      createdAt: WHEN,
    } as never;
    const opts = webhooksView({
      session: session('admin'),
      at: AT,
      endpoints: [endpoint],
      deliveries: [delivery],
      nextCursor: null,
      failedOnly: false,
      cursor: undefined,
    });
    const text = rendered({ ...opts, body: addedSecret({ url, secret: HOSTILE }) });
    expect(text).toContain(`<h2 id="new-secret-heading">Endpoint https://hooks.example.com/${ESCAPED} added</h2>`);
    const full = rendered(opts);
    expect(full).toContain(`<td><code>https://hooks.example.com/${ESCAPED}</code></td>`);
    expect(full).toContain(`<td>disabled (${ESCAPED})</td>`);
    expect(full).toContain(`<td>${ESCAPED}</td>`);
    expect(full).toContain(`aria-label="Remove https://hooks.example.com/${ESCAPED}"`);
  });

  it("members and account: members' and invitations' emails, and the invitation's link", () => {
    const email = `b${HOSTILE}@x.example.com`;
    const escapedEmail = `b${ESCAPED}@x.example.com`;
    const text = rendered(
      membersView({
        session: session(),
        members: [{ id: 'mem_"2', email, role: 'admin', twoFactor: false, createdAt: WHEN, lastSignInAt: null }],
        invitations: [{ id: 'inv_1', email, role: 'viewer', invitedBy: 'mem_"2', createdAt: WHEN, expiresAt: WHEN }],
        required: false,
        message: invitationLinkBox({ email, role: 'viewer' }, `https://cp.example.com/console/invitations/${HOSTILE}`, 'soon'),
      }),
    );
    expect(text).toContain(`<td>${escapedEmail}</td><td>admin</td><td>off</td>`);
    expect(text).toContain(`<tr><td>${escapedEmail}</td><td>viewer</td><td>${escapedEmail}</td>`);
    expect(text).toContain(`<code class="secret" id="invitation-link">https://cp.example.com/console/invitations/${ESCAPED}</code>`);
    expect(text).toContain('action="/console/members/mem_%222/role"');
    const account = rendered(accountView({ session: session('viewer') }));
    expect(account).toContain(`<p>Signed in as <strong>a${ESCAPED}@x.example.com</strong> (viewer).`);
  });

  it('sign-in, two-factor and invitation pages: the typed email, the invitation and the recovery codes', () => {
    expect(rendered(signInView({ csrf: 'tok"en', email: HOSTILE }))).toContain(`required value="${ESCAPED}" id="f-email"`);
    expect(rendered(codeView({ csrf: 'tok"en' }))).toContain('<h1>Two-factor code</h1>');
    const enroll = rendered(enrollView({ session: session('owner'), secret: 'ABCD', uri: `otpauth://totp/${HOSTILE}`, qr: 'data:image/png;base64,AAAA' }));
    expect(enroll).toContain(`<a href="otpauth://totp/${ESCAPED}">Open in authenticator app</a>`);
    expect(enroll).toContain(`value="a${ESCAPED}@x.example.com" autocomplete="username" hidden`);
    expect(recoveryCodesBox([HOSTILE, 'b']).text).toContain(`aria-label="Recovery codes">${ESCAPED}\nb</pre>`);
    const invitation = rendered(invitationView({ invitation: { email: HOSTILE, role: 'viewer' }, token: 't"1', csrf: 'tok"en' }));
    expect(invitation).toContain(`with the email <strong>${ESCAPED}</strong>`);
    expect(invitation).toContain('action="/console/invitations/t%221"');
  });

  it('API keys and audit log: the key name and the details of a change', () => {
    const key = {
      id: 'key_1',
      name: HOSTILE,
      prefix: 'cp_live_ab',
      scope: 'read',
      createdBy: HOSTILE,
      createdAt: WHEN,
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      state: 'active',
    } as never;
    const keys = rendered(keysView({ session: session('admin'), keys: [key] }));
    expect(keys).toContain(`<td>${ESCAPED}</td><td><code>cp_live_ab…</code></td>`);
    expect(keys).toContain(`aria-label="Revoke ${ESCAPED}"`);
    // A roll keeps the old key a day unless the form says otherwise, and so does a post without the field.
    expect(rollDelayOf({})).toBe('24h');
    expect(rollDelayOf({ expiresIn: 'now' })).toBe('now');
    expect(keys).toContain('<option value="now">now</option><option value="1h">in 1 hour</option><option value="24h" selected>in 24 hours</option>');
    expect(keys).toContain('<td>19 Nov 2026, 08:30 UTC</td>');
    const audit = rendered(
      auditView({
        session: session('owner'),
        log: {
          items: [
            {
              id: 'aud_1',
              action: 'team.created',
              actor: { kind: 'member', id: 'mem_1', label: HOSTILE },
              target: { kind: 'team', id: HOSTILE },
              address: null,
              details: { name: HOSTILE },
              createdAt: WHEN,
            },
          ],
          nextCursor: null,
        } as never,
        next: null,
        retention: { auditDays: 365, deliveryDays: 30 },
        today: new Date(WHEN),
      }),
    );
    expect(audit).toContain(
      `<tr><td>19 Nov 2026, 08:30:00 UTC</td><td>${ESCAPED} (member)</td><td>Team created</td><td>team <code>${ESCAPED}</code></td><td>-</td><td><code>name: ${ESCAPED}</code></td>`,
    );
    expect(audit).toContain('<optgroup label="Teams and pulses"><option value="pulse.moderated">Pulse moderated</option>');
    expect(audit).not.toContain('>team.created<');
  });
});
