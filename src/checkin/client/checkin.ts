/**
 * The check-in page's script (bundled with @cloudflare/blindrsa-ts at build time by
 * scripts/bundle.mjs, and served from /checkin/assets/checkin.<hash of its content>.js). It reads the personal link's token from the address's fragment
 * (never sent to the server by the browser), opens the link, checks the key against the
 * published one for the week this device's clock is in, and only at the respondent's first
 * gesture on the form (never on load: mail scanners run pages) blinds a random message, has it
 * signed, unblinds it and keeps the token until the answer is sent: the answer carries the token
 * and nothing that names the link or the person.
 *
 * Every word comes from the catalogues bundled into this script (src/i18n): the language is the
 * link's (`#<token>&lang=tr`), else the browser's, and the menu changes it in the page alone, so no
 * request the page makes depends on it and nothing of it is stored by the service.
 */
import { RSABSSA } from '@cloudflare/blindrsa-ts';
import { EARLY_START_HOURS, GRACE_HOURS } from '../../domain/checkins/window.js';
import { dirOf, format, LOCALES, type Locale, type MessageKey, matchLocale, preferredLocale } from '../../i18n/index.js';

type Opened = {
  orgName: string;
  week: string;
  closesAt: string;
  teamId: string | null;
  teamName: string | null;
  keyId: string;
  publicKey: string;
  reasons: string[];
  state: 'new' | 'opened' | 'issued';
  team: { people: number; recentJoiners: number } | null;
  organization: { people: number };
};
type Published = { keys: { id: string; week: string; teamId: string | null; publicKey: string }[] };
type Token = { keyId: string; message: string; signature: string };

const DAY = 86_400_000;
const WEEK = 7 * DAY;
const GRACE = GRACE_HOURS * 3_600_000;
const EARLY = EARLY_START_HOURS * 3_600_000;
const weekStartOf = (t: number) => {
  const day = Math.floor(t / DAY);
  // 1970-01-01 was a Thursday: ISO weekday 4.
  return (day - ((day + 3) % 7)) * DAY;
};
/**
 * Whether this device's clock puts it in the link's week: in it, in the grace hours after it, or
 * in the day before it (a round in a zone ahead of UTC). The page answers only under the key of
 * such a week, so the service cannot hand one person the key of a week of its own.
 */
function weekFitsClock(week: string, now: number): boolean {
  const start = Date.parse(`${week}T00:00:00.000Z`);
  if (!Number.isFinite(start) || weekStartOf(start) !== start) return false;
  return now >= start - EARLY && now < start + WEEK + GRACE;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const b64u = (b: Uint8Array) =>
  btoa(String.fromCharCode(...b))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const unb64u = (s: string) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

type Values = Record<string, string | number>;
let locale: Locale = 'en';

/** Shows a message in an element, remembering its key and values so that a change of language shows it again. */
function put(el: HTMLElement, key: MessageKey, values?: Values) {
  el.dataset.m = key;
  if (values) el.dataset.v = JSON.stringify(values);
  else delete el.dataset.v;
  el.textContent = format(locale, key, values);
}

/** Shows every word of the page in a language: the document's own and every element with a key. */
function applyLocale(next: Locale) {
  locale = next;
  document.documentElement.lang = next === 'en-XA' ? 'en' : next;
  document.documentElement.dir = dirOf(next);
  for (const el of document.querySelectorAll<HTMLElement>('[data-m]')) {
    const values = el.dataset.v ? (JSON.parse(el.dataset.v) as Values) : undefined;
    el.textContent = format(locale, el.dataset.m as MessageKey, values);
  }
  const select = document.getElementById('lang') as HTMLSelectElement | null;
  if (select) select.value = next;
  const about = document.getElementById('about-link') as HTMLAnchorElement | null;
  if (about) about.href = `/checkin/about#lang=${encodeURIComponent(next)}`;
}

/** The link's fragment: the token, and the language the mail was written in. */
function readFragment(): { token: string; lang: Locale | null } {
  let token = '';
  let lang: Locale | null = null;
  for (const p of location.hash.slice(1).split('&')) {
    if (p.startsWith('lang=')) lang = matchLocale(decodeURIComponent(p.slice(5)));
    else if (p !== '' && token === '') token = p;
  }
  return { token, lang };
}

/** The language menu: shown once the script runs; a choice changes the page and the address's fragment, nothing else. */
function languageMenu() {
  const select = document.getElementById('lang') as HTMLSelectElement | null;
  const box = document.getElementById('language');
  if (!select || !box) return;
  box.hidden = false;
  select.addEventListener('change', () => {
    const next = (LOCALES as readonly string[]).includes(select.value) ? select.value : 'en';
    applyLocale(next);
    history.replaceState(null, '', `${location.pathname}#lang=${encodeURIComponent(next)}`);
  });
}

function say(key: MessageKey, kind: 'error' | 'ok' = 'error', values?: Values) {
  const status = $('status');
  put(status, key, values);
  status.className = `notice ${kind}`;
  status.hidden = false;
  $('loading').hidden = true;
}

async function post<T>(url: string, body: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  return { status: r.status, body: (await r.json().catch(() => ({}))) as T };
}

async function main() {
  const fragment = readFragment();
  applyLocale(fragment.lang ?? preferredLocale(navigator.languages ?? [navigator.language]));
  languageMenu();
  // The about page has no form: its words and its menu are all it needs.
  if (!document.getElementById('answer')) return;
  // Shown to every browser that runs no script (a noscript element is not shown when a browser only
  // blocks scripts); this script hides it.
  $('nojs').hidden = true;
  $('loading').hidden = false;
  const match = /^\/checkin\/o\/([^/]+)$/.exec(location.pathname);
  const link = fragment.token;
  if (!match) return say('checkin.linkMissing');
  const orgId = decodeURIComponent(match[1]);
  const stored = `cp-checkin:${orgId}:${link}`;
  // The token leaves the address bar and the history at once; the language stays in the fragment.
  if (link) history.replaceState(null, '', `${location.pathname}#lang=${encodeURIComponent(locale)}`);
  if (!link) return say('checkin.linkMissing');

  // Opening marks the link opened and issues nothing: a mail scanner that runs the page uses nothing up.
  const opened = await post<Opened>(`/checkin/o/${encodeURIComponent(orgId)}/open`, { token: link });
  if (opened.status === 404) return say('checkin.linkGone');
  if (opened.status === 429) return say('checkin.limited');
  if (opened.status !== 200) return say('checkin.failed');
  const o = opened.body;
  put($('org'), 'checkin.org', { name: o.orgName });
  if (o.teamName) put($('team'), 'checkin.team', { name: o.teamName });
  else put($('team'), 'checkin.noTeam');
  if (o.team) {
    put($('team-size'), 'checkin.teamSize', { people: o.team.people, joined: o.team.recentJoiners });
    $('team-size').hidden = false;
  }

  // The key must be the one published for everyone of this team and week, the week this device's clock is in.
  if (!weekFitsClock(o.week, Date.now())) return say('checkin.wrongWeek');
  const published = (await (await fetch(`/checkin/keys/${encodeURIComponent(orgId)}`, { credentials: 'omit' })).json()) as Published;
  const mine = published.keys.filter((k) => k.week === o.week && k.teamId === o.teamId);
  if (mine.length !== 1 || mine[0].id !== o.keyId || mine[0].publicKey !== o.publicKey) return say('checkin.keyMismatch');

  const suite = RSABSSA.SHA384.PSS.Randomized();
  const spki = unb64u(o.publicKey);
  const publicKey = await crypto.subtle.importKey('spki', spki, { name: 'RSA-PSS', hash: 'SHA-384' }, true, ['verify']);
  let saved: Token | null = JSON.parse(localStorage.getItem(stored) ?? 'null') as Token | null;
  if (saved && saved.keyId !== o.keyId) saved = null;
  if (!saved && o.state === 'issued') return say('checkin.alreadyIssued');
  if (saved) say('checkin.resumed', 'ok');
  else if (o.state === 'opened') say('checkin.openedBefore', 'ok');

  /** The token, obtained once, at the first gesture on the form. */
  let token: Promise<Token | 'issued' | 'limited' | 'failed'> | null = saved ? Promise.resolve(saved) : null;
  const obtain = () =>
    (token ??= (async () => {
      const prepared = suite.prepare(crypto.getRandomValues(new Uint8Array(32)));
      const { blindedMsg, inv } = await suite.blind(publicKey, prepared);
      const issued = await post<{ blindSignature: string }>(`/checkin/o/${encodeURIComponent(orgId)}/issue`, { token: link, blindedMessage: b64u(blindedMsg) });
      if (issued.status === 409) return 'issued' as const;
      if (issued.status === 429) return 'limited' as const;
      if (issued.status !== 200) return 'failed' as const;
      const signature = await suite.finalize(publicKey, prepared, unb64u(issued.body.blindSignature), inv);
      const t: Token = { keyId: o.keyId, message: b64u(prepared), signature: b64u(signature) };
      localStorage.setItem(stored, JSON.stringify(t));
      return t;
    })().catch(() => 'failed' as const));

  const form = $<HTMLFormElement>('answer');
  // "Don't attach my team": offered with every team, chosen from the start when someone joined it recently.
  const attachNo = $<HTMLInputElement>('attach-no');
  const smallOrg = $('small-org');
  const orgKeySmall = o.organization.people < 5;
  const showSmallOrg = () => {
    const withoutTeam = !o.team || attachNo.checked;
    put(smallOrg, 'checkin.smallOrgKey', { people: o.organization.people });
    smallOrg.hidden = !(withoutTeam && orgKeySmall);
  };
  if (o.team) {
    put($('attach-yes-label'), 'checkin.attachYes', { name: o.teamName ?? '' });
    const recent = o.team.recentJoiners > 0;
    $<HTMLInputElement>(recent ? 'attach-no' : 'attach-yes').checked = true;
    $('attach-why').hidden = !recent;
    $('attach').hidden = false;
    for (const input of form.querySelectorAll<HTMLInputElement>('input[name="team"]')) input.addEventListener('change', showSmallOrg);
  }
  showSmallOrg();

  const reasons = $('reasons');
  if (o.reasons.length > 0) {
    const list = $('reason-list');
    for (const [i, r] of o.reasons.entries()) {
      const label = document.createElement('label');
      const input = document.createElement('input');
      input.type = 'radio';
      input.name = 'reason';
      input.value = r;
      input.id = `reason-${i}`;
      label.append(input, ` ${r}`);
      list.append(label);
    }
    reasons.hidden = false;
  }
  form.hidden = false;
  $('loading').hidden = true;
  for (const gesture of ['pointerdown', 'keydown', 'input', 'change']) form.addEventListener(gesture, () => void obtain(), { once: true });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const level = Number(data.get('level'));
    if (!(level >= 1 && level <= 5)) return;
    const reason = data.get('reason');
    const comment = String(data.get('comment') ?? '');
    const button = form.querySelector('button')!;
    button.disabled = true;
    const t = await obtain();
    if (t === 'issued') {
      form.hidden = true;
      return say('checkin.alreadyIssued');
    }
    if (t === 'failed' || t === 'limited') {
      token = null;
      button.disabled = false;
      return say(t === 'limited' ? 'checkin.limited' : 'checkin.failed');
    }
    const answered = await post<{ commentsFrom: string | null; error?: { message: string } }>('/checkin/answer', {
      orgId,
      keyId: t.keyId,
      message: t.message,
      signature: t.signature,
      level,
      reason: reason && reason !== '' ? String(reason) : null,
      comment: comment.trim() === '' ? null : comment,
      team: !(o.team && attachNo.checked),
    });
    // A 409 is a token spent before (this answer, sent again) or, rarely, a key that took as many answers as its people.
    const full = answered.status === 409 && !/already used/.test(answered.body.error?.message ?? '');
    if (full) {
      localStorage.removeItem(stored);
      form.hidden = true;
      return say('checkin.keyFull');
    }
    if (answered.status === 200 || answered.status === 409) {
      localStorage.removeItem(stored);
      form.hidden = true;
      $('status').hidden = true;
      $('thanks').hidden = false;
      put($('thanks-text'), answered.status === 409 ? 'checkin.alreadyAnswered' : 'checkin.thanks');
      if (answered.status === 200 && answered.body.commentsFrom) {
        put($('thanks-comment'), 'checkin.thanksComment', { when: Date.parse(answered.body.commentsFrom) });
      }
      $('thanks-title').focus();
      return;
    }
    button.disabled = false;
    say(answered.status === 429 ? 'checkin.limited' : 'checkin.failed');
  });
}

main().catch(() => say('checkin.failed'));
