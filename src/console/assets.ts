import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The console's only stylesheet and script, served from /console/assets/ (same origin, no inline
 * code, so the Content-Security-Policy needs no 'unsafe-inline'). Colours meet WCAG 2.2 AA contrast
 * on their backgrounds; focus is always visible.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --line: #767676; --accent: #0b5394; --err: #a4000f; --ok: #1e5e20; --soft: #f3f5f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, main:focus-visible { outline: 3px solid #1a73e8; outline-offset: 2px; }
.skip { position: absolute; left: -10000px; top: 0; }
.skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 8px; z-index: 10; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 12px 24px; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { margin: 0; font-weight: 600; }
nav ul { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 0; padding: 0; list-style: none; }
nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
/* Every link of the navigation is a target of at least 24 by 24 pixels (WCAG 2.2, 2.5.8), however the list wraps. */
nav a { display: inline-block; min-height: 24px; min-width: 24px; }
.signout { margin-left: auto; display: flex; align-items: center; gap: 8px; }
.who { color: var(--muted); }
main { max-width: 72rem; padding: 24px; }
h1 { font-size: 1.6rem; margin-top: 0; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
form.stack { display: grid; gap: 12px; max-width: 28rem; }
label { display: grid; gap: 4px; font-weight: 600; }
fieldset.checks { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; border: 1px solid var(--line); border-radius: 4px; }
fieldset.checks legend { font-weight: 600; }
fieldset.checks label { display: inline; font-weight: 400; margin-right: 8px; }
input, select { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 4px; color: var(--fg); background: var(--bg); }
button { font: inherit; padding: 6px 14px; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent); color: #ffffff; cursor: pointer; }
button.secondary { background: var(--bg); color: var(--accent); }
button.danger { background: var(--err); border-color: var(--err); }
table { border-collapse: collapse; width: 100%; margin: 12px 0; }
/* A wide table scrolls inside its own box on a phone (360 px): the page never scrolls sideways. */
.table-scroll { overflow-x: auto; max-width: 100%; }
img.qr { display: block; background: #ffffff; padding: 4px; }
@media (max-width: 30rem) { main { padding: 12px; } th, td { padding: 4px; } }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td form { display: inline-flex; gap: 6px; align-items: center; margin: 0 4px 4px 0; }
td code { word-break: break-all; }
td.when { white-space: nowrap; }
.notice { padding: 8px 12px; border-left: 4px solid; background: var(--soft); }
.notice.error { border-color: var(--err); color: var(--err); }
.notice.ok { border-color: var(--ok); color: var(--ok); }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; word-break: break-all; background: var(--soft); padding: 8px; border: 1px solid var(--line); display: block; }
.muted { color: var(--muted); }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.filters { display: flex; flex-wrap: wrap; align-items: end; gap: 8px 12px; margin: 12px 0; }
.filters label { display: inline-grid; }
figure.series { margin: 16px 0 24px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
.chart { min-height: 240px; max-width: 100%; overflow: hidden; }
details > summary { cursor: pointer; color: var(--accent); }
.comments { list-style: none; padding: 0; }
.comments li { border-bottom: 1px solid var(--line); padding: 8px 0; display: flex; gap: 12px; align-items: start; justify-content: space-between; }
.comments bdi, .wrap { overflow-wrap: anywhere; word-break: break-word; white-space: pre-wrap; }
.unread { font-weight: 700; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
`;

/**
 * Charts of the overview: each `[data-chart-for=ID]` is drawn from the rows of the table ID
 * (date, pulses, average level), so a chart shows exactly the figures of its table. uPlot sets
 * element styles from script (CSSOM), which style-src 'self' allows; nothing inline in markup.
 */
export const CHARTS_JS = `
const LEVEL = '#0b5394';
const COUNT = '#8a4b00';
for (const box of document.querySelectorAll('[data-chart-for]')) {
  const table = document.getElementById(box.dataset.chartFor);
  if (!table || typeof uPlot !== 'function') continue;
  const xs = [], avg = [], count = [];
  for (const row of table.tBodies[0].rows) {
    xs.push(Date.parse(row.cells[0].textContent + 'T00:00:00Z') / 1000);
    count.push(Number(row.cells[1].textContent));
    avg.push(Number(row.cells[2].textContent));
  }
  const width = Math.max(280, Math.min(box.clientWidth || 900, 1100));
  new uPlot({
    width, height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, level: { range: [1, 5] }, pulses: { range: (u, min, max) => [0, Math.max(1, max)] } },
    axes: [{}, { scale: 'level', label: 'Average level' }, { scale: 'pulses', side: 1, label: 'Pulses', grid: { show: false } }],
    series: [
      { label: 'Date' },
      { label: 'Average level', scale: 'level', stroke: LEVEL, width: 2, value: (u, v) => v == null ? '' : v.toFixed(2) },
      { label: 'Pulses', scale: 'pulses', stroke: COUNT, width: 1, dash: [4, 3] },
    ],
  }, [xs, avg, count], box);
}
`;

const requireFromHere = createRequire(import.meta.url);
/** uPlot, served from the package itself (never a CDN), read once at start. */
export const UPLOT_JS = readFileSync(requireFromHere.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
export const UPLOT_CSS = readFileSync(requireFromHere.resolve('uplot/dist/uPlot.min.css'), 'utf8');

/** Copy buttons: `<button data-copy="ID">` copies the text of the element with that id. */
export const CONSOLE_JS = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const target = document.getElementById(button.dataset.copy);
    if (!target) return;
    try {
      await navigator.clipboard.writeText(target.textContent.trim());
      button.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(target);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = 'Selected: press Ctrl+C';
    }
  });
}
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}
`;
