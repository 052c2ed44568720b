import { escapeHtml, html, Safe } from '../http/html.js';
import { assetHref } from './assets.js';
import type { MessageKey } from '../i18n/index.js';
import { PLAIN, type Speaker } from './words.js';

/** The console's pages are written with the base's escaping template (src/http/html.ts). */
export { escapeHtml, html, Safe } from '../http/html.js';

/**
 * Table rows, each cell escaped like any interpolated value, built in one pass: the overview of a
 * year has thousands of rows, and a template per row cost more than the queries behind them.
 */
export function tableRows(count: number, cells: (i: number) => readonly (string | number)[]): Safe {
  const rows = new Array<string>(count);
  for (let i = 0; i < count; i++) {
    // Without the optional end tags of td and tr (HTML's own rule): a fifth of a long table's bytes.
    let row = '<tr>';
    for (const v of cells(i)) row += `<td>${typeof v === 'number' ? String(v) : escapeHtml(v)}`;
    rows[i] = row;
  }
  return new Safe(rows.join(''));
}

export interface NavItem {
  href: string;
  /** Its words' key in the catalogue. */
  label: MessageKey;
}

export interface PageOptions {
  title: string;
  /** The signed-in member's navigation; none on the sign-in and invitation pages. */
  nav?: { items: NavItem[]; current: string; email: string; orgName: string; csrf: string };
  body: Safe;
  /** Extra scripts (classic, deferred, in order) and stylesheets of this page: their hashed URLs (assetHref). */
  scripts?: string[];
  styles?: string[];
  /** The reader's language (its words, `lang` and `dir`); English without one. */
  speaker?: Speaker;
}

/** The one layout: a skip link, the navigation, one `main`, and the console's own stylesheet and script. */
export function page({ title, nav, body, scripts = [], styles = [], speaker = PLAIN }: PageOptions): string {
  const t = speaker.t;
  return `<!doctype html>${html`<html lang="${speaker.lang}"${speaker.dir === 'rtl' ? html` dir="rtl"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t('console.layout.title', { page: title })}</title>
<link rel="icon" href="${assetHref('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetHref('console.css')}">
${styles.map((href) => html`<link rel="stylesheet" href="${href}">`)}
<script type="module" src="${assetHref('console.js')}"></script>
${scripts.map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<a class="skip" href="#main">${t('console.layout.skip')}</a>
<header class="top">
<p class="brand">${t('console.layout.brand')}${nav ? html` · <span class="org">${nav.orgName}</span>` : ''}</p>
${
  nav
    ? html`<nav aria-label="${t('console.layout.nav')}">
<ul>${nav.items.map((i) => html`<li><a href="${i.href}"${i.href === nav.current ? html` aria-current="page"` : ''}>${t(i.label)}</a></li>`)}</ul>
</nav>
<form method="post" action="/console/sign-out" class="signout">
<input type="hidden" name="_csrf" value="${nav.csrf}">
<span class="who">${nav.email}</span>
<button type="submit">${t('console.layout.signOut')}</button>
</form>`
    : ''
}
</header>
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`}`;
}

/** A message about the last request, announced to screen readers. */
export const notice = (text: string | undefined, kind: 'error' | 'ok' = 'error') =>
  text ? html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>` : html``;

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;
