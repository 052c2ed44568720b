import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS, lastClosedWeek, runAlertEngine, type RaisedByEngine } from '../../src/domain/alert-engine.js';
import { demoDataset } from '../../src/domain/demo.js';
import { closedWeeks } from '../../examples/weekly-report.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listen } from '../helpers/listen.js';
import { ROOT } from '../helpers/process.js';

const KEY = 'cp_test_demo_report_0123456789';

describe('examples/weekly-report.ts against the demo organization', () => {
  let t: TestApp;
  let base: string;
  const now = new Date();
  const dataset = demoDataset(now, { orgId: 'org_demo_report', key: KEY });
  const org = dataset.organizations![0];

  let raised: RaisedByEngine[] = [];
  beforeAll(async () => {
    t = await createTestApp({ dataset });
    // The demo's alerts come from the engine, as `climate-pulse demo` raises them.
    const last = lastClosedWeek(now, 60);
    const weeks = Array.from({ length: 8 }, (_, i) => new Date(last.getTime() - i * 7 * 86_400_000));
    raised = (await runAlertEngine(t.db, { thresholds: DEFAULT_THRESHOLDS, weeks, clock: () => new Date() })).raised;
    base = await listen(t.app);
  });
  afterAll(() => t.close());

  it('prints a line per team with the last four closed weeks, as the pulses say', async () => {
    // Run as an integrator would: a separate process, the client package resolved by name (its sources).
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', 'examples/weekly-report.ts'], {
      cwd: ROOT,
      env: { ...process.env, CP_BASE_URL: base, CP_API_KEY: KEY },
    });
    expect(stderr).toBe('');
    const lines = stdout.trimEnd().split('\n');
    const weeks = closedWeeks(now);
    expect(lines[0]).toBe(`${org.name}: weeks ${weeks[0].label} to ${weeks[3].label} (pulses, average level; alerts)`);

    const teams = [...org.teams!].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
    const teamLines = lines.slice(1).filter((l) => !l.startsWith('(no team)'));
    expect(teamLines).toHaveLength(teams.length);
    teams.forEach((team, i) => {
      const line = teamLines[i];
      expect(line.startsWith(team.name)).toBe(true);
      const cells = [...line.matchAll(/(\d{4}-W\d{2})\s+(\d+) x (\S+)/g)].map((m) => [m[1], Number(m[2]), m[3]]);
      const expected = weeks.map((w) => {
        const levels = org.pulses!.filter((p) => p.subteamId === team.id && p.createdAt >= w.from && p.createdAt < w.to).map((p) => p.level);
        const avg = levels.length ? (Math.round((levels.reduce((s, l) => s + l, 0) / levels.length) * 100) / 100).toFixed(2) : '--';
        return [w.label, levels.length, avg];
      });
      expect(cells).toEqual(expected);
      expect(expected.every(([, count]) => (count as number) > 0)).toBe(true);
      const alerts = raised.filter((a) => a.subteamName === team.name && weeks.some((w) => w.label === a.weekISO));
      for (const a of alerts) expect(line).toContain(`${a.weekISO} ${a.type}: ${a.message}`);
      if (alerts.length === 0) expect(line.endsWith('| alerts: none')).toBe(true);
    });
    // The demo's dip in Customer Support raised alerts in the last weeks.
    expect(teamLines.find((l) => l.startsWith('Customer Support'))).not.toMatch(/alerts: none$/);
  });

  it('exits 1 with the error code and request id on a bad key', async () => {
    const run = promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', 'examples/weekly-report.ts'], {
      cwd: ROOT,
      env: { ...process.env, CP_BASE_URL: base, CP_API_KEY: 'cp_live_wrong' },
    });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/^401 unauthorized: .+ \(request [0-9a-f-]{36}\)\n$/) });
  });
});
