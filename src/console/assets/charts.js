/*
 * Charts of the overview (a classic script after uPlot's): each `[data-chart-for=ID]` is drawn from the
 * rows of the table ID (the day in its `time` element's datetime, pulses, average level), so a chart
 * shows exactly the figures of its table. Every day of the box's [data-from, data-to] is a point: a
 * day the table does not list is null, and `spanGaps: false` leaves a gap there instead of a line
 * across it. The x axis counts whole days (ticks of 1, 2, 7, 14 or 28 days, never hours), written
 * in the reader's locale (data-locale). The axes' and legend's words are the box's data-label-day,
 * data-label-level and data-label-pulses, which the server writes from the reader's catalogue: no word
 * of the chart is in this script. The chart is as wide as its box, and follows it when the box
 * changes width (a phone turned, a window resized), so it never makes the page scroll sideways.
 * uPlot sets element styles from script (CSSOM), which style-src 'self' allows; nothing inline in markup.
 */
const LEVEL = '#0b5394';
const COUNT = '#8a4b00';
const DAY_S = 86_400;
const dayOf = (iso) => Date.parse(`${iso}T00:00:00Z`) / 1000;
for (const box of document.querySelectorAll('[data-chart-for]')) {
  const table = document.getElementById(box.dataset.chartFor);
  if (!table || typeof uPlot !== 'function') continue;
  let dayWords;
  try {
    dayWords = new Intl.DateTimeFormat(box.dataset.locale || 'en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' });
  } catch {
    dayWords = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' });
  }
  const listed = new Map();
  for (const row of table.tBodies[0].rows) {
    const time = row.cells[0].querySelector('time');
    listed.set(dayOf(time ? time.dateTime : row.cells[0].textContent), [Number(row.cells[2].textContent), Number(row.cells[1].textContent)]);
  }
  const first = dayOf(box.dataset.from);
  const last = dayOf(box.dataset.to);
  const xs = [];
  const avg = [];
  const count = [];
  for (let t = first; t <= last; t += DAY_S) {
    const v = listed.get(t);
    xs.push(t);
    avg.push(v ? v[0] : null);
    count.push(v ? v[1] : null);
  }
  const words = { day: box.dataset.labelDay || '', level: box.dataset.labelLevel || '', pulses: box.dataset.labelPulses || '' };
  const widthOf = () => Math.max(200, Math.min(box.clientWidth || 320, 1100));
  const plot = new uPlot(
    {
      width: widthOf(),
      height: 240,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, level: { range: [1, 5] }, pulses: { range: (_u, _min, max) => [0, Math.max(1, max ?? 1)] } },
      axes: [
        {
          incrs: [1, 2, 7, 14, 28, 56, 91].map((d) => d * DAY_S),
          values: (_u, splits) => splits.map((s) => dayWords.format(new Date(s * 1000))),
        },
        { scale: 'level', label: words.level },
        { scale: 'pulses', side: 1, label: words.pulses, grid: { show: false } },
      ],
      series: [
        { label: words.day, value: (_u, v) => (v == null ? '' : dayWords.format(new Date(v * 1000))) },
        { label: words.level, scale: 'level', stroke: LEVEL, width: 2, spanGaps: false, value: (_u, v) => (v == null ? '–' : v.toFixed(2)) },
        { label: words.pulses, scale: 'pulses', stroke: COUNT, width: 1, dash: [4, 3], spanGaps: false, value: (_u, v) => (v == null ? '–' : String(v)) },
      ],
    },
    [xs, avg, count],
    box,
  );
  if (typeof ResizeObserver === 'function') {
    let last = box.clientWidth;
    new ResizeObserver(() => {
      if (box.clientWidth === last) return;
      last = box.clientWidth;
      plot.setSize({ width: widthOf(), height: 240 });
    }).observe(box);
  }
}
