import { html, type Safe } from '../http/html.js';
import { WORDS } from './words.js';

/** The check-in pages: escaped by construction (the console's `html`), no inline script or style. */
/** Where the page's stylesheet and script are served: names that hold their content's hash (src/checkin/index.ts). */
export interface PageAssets {
  css: string;
  script: string;
}

function layout(title: string, body: Safe, assets: PageAssets, script: boolean): string {
  return `<!doctype html>${html`<html lang="${WORDS.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${assets.css}">
${script ? html`<script src="${assets.script}" defer></script>` : ''}
</head>
<body>
<main id="main">
${body}
</main>
</body>
</html>
`}`;
}

export function checkinPage(assets: PageAssets): string {
  return layout(
    WORDS.title,
    html`<h1>${WORDS.title}</h1>
<p id="org" class="org"></p>
<p id="team" class="team"></p>
<p id="team-size" class="muted" hidden></p>
<p id="nojs" class="notice error">${WORDS.noScript}</p>
<p id="loading" class="muted" role="status" hidden>${WORDS.loading}</p>
<p id="status" hidden role="alert"></p>
<form id="answer" hidden>
<fieldset class="levels">
<legend><h2>${WORDS.question}</h2></legend>
${WORDS.levels.map((label, i) => html`<label class="level"><input type="radio" name="level" value="${i + 1}" required> <span>${i + 1} · ${label}</span></label>`)}
</fieldset>
<fieldset id="reasons" class="reasons" hidden>
<legend>${WORDS.reasonLegend}</legend>
<label><input type="radio" name="reason" value="" checked> ${WORDS.reasonNone}</label>
<div id="reason-list"></div>
</fieldset>
<label for="comment" class="comment-label">${WORDS.comment}</label>
<textarea id="comment" name="comment" maxlength="2000" rows="4"></textarea>
<fieldset id="attach" class="reasons" hidden>
<legend>${WORDS.attachLegend}</legend>
<label><input type="radio" name="team" value="yes" id="attach-yes"> <span id="attach-yes-label"></span></label>
<label><input type="radio" name="team" value="no" id="attach-no"> ${WORDS.attachNo}</label>
<p class="muted">${WORDS.attachNoHint}</p>
<p id="attach-why" class="notice" hidden>${WORDS.recentJoinersWhy}</p>
</fieldset>
<p id="small-org" class="notice error" hidden></p>
<p class="kept">${WORDS.kept} <a href="/checkin/about">${WORDS.howItWorks}</a></p>
<button type="submit">${WORDS.submit}</button>
</form>
<section id="thanks" hidden aria-labelledby="thanks-title">
<h2 id="thanks-title" tabindex="-1">${WORDS.thanksTitle}</h2>
<p id="thanks-text"></p>
<p id="thanks-comment"></p>
</section>`,
    assets,
    true,
  );
}

export function aboutPage(assets: PageAssets): string {
  return layout(WORDS.aboutTitle, html`<h1>${WORDS.aboutTitle}</h1>${WORDS.about.map((p) => html`<p>${p}</p>`)}`, assets, false);
}

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
.notice { padding: 8px 12px; border-left: 4px solid; background: var(--soft); }
.notice.error { border-color: var(--err); color: var(--err); }
.notice.ok { border-color: var(--ok); color: var(--ok); }
[hidden] { display: none !important; }
`;
