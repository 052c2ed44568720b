/*
 * Charts of the overview (a classic script after uPlot's): each `[data-chart-for=ID]` is drawn from the
 * rows of the table ID (date, pulses, average level), so a chart shows exactly the figures of its
 * table. uPlot sets element styles from script (CSSOM), which style-src 'self' allows; nothing
 * inline in markup.
 */
const LEVEL = '#0b5394';
const COUNT = '#8a4b00';
for (const box of document.querySelectorAll('[data-chart-for]')) {
  const table = document.getElementById(box.dataset.chartFor);
  if (!table || typeof uPlot !== 'function') continue;
  const xs = [],
    avg = [],
    count = [];
  for (const row of table.tBodies[0].rows) {
    xs.push(Date.parse(`${row.cells[0].textContent}T00:00:00Z`) / 1000);
    count.push(Number(row.cells[1].textContent));
    avg.push(Number(row.cells[2].textContent));
  }
  const width = Math.max(280, Math.min(box.clientWidth || 900, 1100));
  new uPlot(
    {
      width,
      height: 240,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, level: { range: [1, 5] }, pulses: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{}, { scale: 'level', label: 'Average level' }, { scale: 'pulses', side: 1, label: 'Pulses', grid: { show: false } }],
      series: [
        { label: 'Date' },
        { label: 'Average level', scale: 'level', stroke: LEVEL, width: 2, value: (_u, v) => (v == null ? '' : v.toFixed(2)) },
        { label: 'Pulses', scale: 'pulses', stroke: COUNT, width: 1, dash: [4, 3] },
      ],
    },
    [xs, avg, count],
    box,
  );
}
