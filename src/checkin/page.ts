import { html, type Safe } from '../http/html.js';
import { dirOf, format, LOCALES, languageNames, type Locale, type MessageKey, SOURCE_LOCALE } from '../i18n/index.js';

/**
 * The check-in pages: escaped by construction (the console's `html`), no inline script or style.
 * Every word comes from the catalogue (src/i18n): an element that shows one carries its key in
 * `data-m`, so the page's script can show it in the reader's language (the link's, or the one
 * chosen in the menu) without any request. The server renders the source language; the language
 * a reader sees is decided in the browser alone.
 */
const say = (locale: Locale, key: MessageKey, values?: Record<string, string | number>) =>
  html`<span data-m="${key}"${values ? html` data-v="${JSON.stringify(values)}"` : ''}>${format(locale, key, values)}</span>`;

/** Where the page's stylesheet and script are served: names that hold their content's hash (src/checkin/index.ts). */
export interface PageAssets {
  css: string;
  script: string;
}

function layout(locale: Locale, titleKey: MessageKey, body: Safe, assets: PageAssets): string {
  return `<!doctype html>${html`<html lang="${locale}" dir="${dirOf(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title data-m="${titleKey}">${format(locale, titleKey)}</title>
<link rel="stylesheet" href="${assets.css}">
<script src="${assets.script}" defer></script>
</head>
<body>
<header class="bar">
<p class="language" id="language" hidden><label for="lang" data-m="checkin.language">${format(locale, 'checkin.language')}</label>
<select id="lang" name="lang">${languageNames().map((l) => html`<option value="${l.locale}" lang="${l.locale === 'en-XA' ? 'en' : l.locale}"${l.locale === locale ? html` selected` : ''}>${l.name}</option>`)}</select></p>
</header>
<main id="main">
${body}
</main>
</body>
</html>
`}`;
}

export function checkinPage(assets: PageAssets, locale: Locale = SOURCE_LOCALE): string {
  const t = (key: MessageKey, values?: Record<string, string | number>) => say(locale, key, values);
  return layout(
    locale,
    'checkin.title',
    html`<h1>${t('checkin.title')}</h1>
<p id="org" class="org"></p>
<p id="team" class="team"></p>
<p id="team-size" class="muted" hidden></p>
<p id="nojs" class="notice error">${t('checkin.noScript')}</p>
<p id="loading" class="muted" role="status" hidden>${t('checkin.loading')}</p>
<p id="status" hidden role="alert"></p>
<form id="answer" hidden>
<fieldset class="levels">
<legend><h2>${t('checkin.question')}</h2></legend>
${[1, 2, 3, 4, 5].map((level) => html`<label class="level"><input type="radio" name="level" value="${level}" required> <span>${level} · ${t(`checkin.level.${level}` as MessageKey)}</span></label>`)}
</fieldset>
<fieldset id="reasons" class="reasons" hidden>
<legend>${t('checkin.reasonLegend')}</legend>
<label><input type="radio" name="reason" value="" checked> ${t('checkin.reasonNone')}</label>
<div id="reason-list"></div>
</fieldset>
<label for="comment" class="comment-label">${t('checkin.comment', { max: 2000 })}</label>
<textarea id="comment" name="comment" maxlength="2000" rows="4"></textarea>
<fieldset id="attach" class="reasons" hidden>
<legend>${t('checkin.attachLegend')}</legend>
<label><input type="radio" name="team" value="yes" id="attach-yes"> <span id="attach-yes-label"></span></label>
<label><input type="radio" name="team" value="no" id="attach-no"> ${t('checkin.attachNo')}</label>
<p class="muted">${t('checkin.attachNoHint')}</p>
<p id="attach-why" class="notice" hidden>${t('checkin.recentJoinersWhy')}</p>
</fieldset>
<p id="small-org" class="notice error" hidden></p>
<p class="kept">${t('checkin.kept')} <a id="about-link" href="/checkin/about">${t('checkin.howItWorks')}</a></p>
<button type="submit">${t('checkin.submit')}</button>
</form>
<section id="thanks" hidden aria-labelledby="thanks-title">
<h2 id="thanks-title" tabindex="-1">${t('checkin.thanksTitle')}</h2>
<p id="thanks-text"></p>
<p id="thanks-comment"></p>
</section>`,
    assets,
  );
}

export function aboutPage(assets: PageAssets, locale: Locale = SOURCE_LOCALE): string {
  const t = (key: MessageKey) => say(locale, key);
  return layout(
    locale,
    'about.title',
    html`<h1>${t('about.title')}</h1>${(['about.p1', 'about.p2', 'about.p3', 'about.p4', 'about.p5'] as const).map((k) => html`<p>${t(k)}</p>`)}`,
    assets,
  );
}

/** The locales the pages offer (for tests and the menu). */
export const PAGE_LOCALES = LOCALES;

export const CHECKIN_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --line: #767676; --accent: #0b5394; --err: #a4000f; --ok: #1e5e20; --soft: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 36rem; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.4rem; margin: 0 0 8px; }
h2 { font-size: 1.2rem; margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible, h2:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 12px 0; padding: 8px 12px; }
legend { padding: 0 4px; font-weight: 600; }
label.level, .reasons label { display: flex; align-items: center; gap: 8px; min-height: 44px; }
input[type="radio"] { width: 22px; height: 22px; }
textarea { width: 100%; font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 4px; }
.comment-label { display: block; font-weight: 600; margin-top: 12px; }
button { font: inherit; width: 100%; min-height: 48px; margin-top: 12px; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: #ffffff; cursor: pointer; }
.kept { font-size: 0.9rem; color: var(--muted); }
.muted { color: var(--muted); }
.notice { padding: 8px 12px; border-inline-start: 4px solid; background: var(--soft); }
.notice.error { border-color: var(--err); color: var(--err); }
.notice.ok { border-color: var(--ok); color: var(--ok); }
.bar { max-width: 36rem; margin: 0 auto; padding: 8px 16px 0; }
.language { display: flex; flex-wrap: wrap; align-items: center; justify-content: flex-end; gap: 8px; margin: 0; }
select { font: inherit; min-height: 44px; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); max-width: 100%; }
select:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
p, legend, label, h1, h2 { overflow-wrap: anywhere; }
[hidden] { display: none !important; }
`;
