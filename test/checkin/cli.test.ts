import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliDatabase, runCliInProcess } from '../helpers/cli.js';

/** `climate-pulse respondents …` and `checkins links|participation` (CONTRACT.md section 12), through the operator API. */
describe('climate-pulse respondents and checkins', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let dir: string;
  beforeAll(async () => {
    cdb = await createCliDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cp-roster-'));
    expect((await runCliInProcess(['migrate'], cdb.env)).code).toBe(0);
    expect((await runCliInProcess(['orgs', 'create', '--id', 'org_cli_r', '--name', 'CLI Roster', '--plan', 'business'], cdb.env)).code).toBe(0);
  }, 120_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    return cdb?.close();
  });

  it('replaces the roster from a file, only when the whole file is good', async () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'email,team\na@cli.test,Ops\nbroken\n');
    const refused = await runCliInProcess(['respondents', 'replace', '--org', 'org_cli_r', bad], cdb.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("climate-pulse: 1 error, nothing changed: Line 3: 'email' must be an email address.\n");
    const hris = join(dir, 'hris.csv');
    writeFileSync(hris, 'Name,Address,Unit\nAna,ana@cli.test,Ops\n');
    const ask = await runCliInProcess(['respondents', 'replace', '--org', 'org_cli_r', hris], cdb.env);
    expect(ask.stderr).toBe(
      'climate-pulse: Say which column holds the email and the team (or \'\' for none): the file\'s columns are "Name", "Address", "Unit".\n',
    );
    const chosen = await runCliInProcess(['respondents', 'replace', '--org', 'org_cli_r', '--email-column', 'Address', '--team-column', 'Unit', hris], cdb.env);
    expect(chosen.stdout).toBe('roster replaced: 1 added, 0 removed, 0 moved, 0 unchanged\n');
    const good = join(dir, 'good.csv');
    writeFileSync(good, ['email,team', ...[1, 2, 3, 4, 5].map((i) => `p${i}@cli.test,Ops`)].join('\n'));
    const replaced = await runCliInProcess(['respondents', 'replace', '--org', 'org_cli_r', good], cdb.env);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toBe('roster replaced: 5 added, 1 removed, 0 moved, 0 unchanged\n');
  }, 240_000);

  it("adds one, lists the roster with the under-5 rule, prints the week's links and the counts", async () => {
    const added = await runCliInProcess(['respondents', 'add', '--org', 'org_cli_r', '--email', 'solo@cli.test'], cdb.env);
    expect(added.stdout).toMatch(/^added solo@cli\.test \(rsp_[0-9A-Za-z]{16}\) to the roster of org_cli_r\n$/);
    const list = await runCliInProcess(['respondents', 'list', '--org', 'org_cli_r'], cdb.env);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +EMAIL +TEAM +ANSWERS AS$/);
    expect(list.stdout).toMatch(/p1@cli\.test +Ops +team\n/);
    expect(list.stdout).toMatch(/solo@cli\.test +organization \(no team\)\n/);
    const links = await runCliInProcess(['checkins', 'links', '--org', 'org_cli_r'], cdb.env);
    expect(links.code, links.stderr).toBe(0);
    const rows = links.stdout.trim().split('\n');
    expect(rows[0]).toBe('email,team,link');
    expect(rows).toHaveLength(7);
    expect(rows[1]).toMatch(/^p1@cli\.test,Ops,http:\/\/127\.0\.0\.1:3000\/checkin\/o\/org_cli_r#[A-Za-z0-9_-]{32}$/);
    expect(links.stderr).toMatch(
      /^6 links of the week of \d{4}-\d\d-\d\d\. Whoever holds them can answer in someone's place, though still learn no answer\.\n$/,
    );
    const counts = await runCliInProcess(['checkins', 'participation', '--org', 'org_cli_r'], cdb.env);
    expect(counts.stdout).toMatch(/ +Ops +5 +<5 +<5\n/);
    // Without SMTP_URL the links file started the round; "send now" says so; the status reads it.
    const send = await runCliInProcess(['checkins', 'send', '--org', 'org_cli_r'], cdb.env);
    expect(send.code).toBe(1);
    expect(send.stderr).toBe(
      "climate-pulse: This server sends no mail (SMTP_URL is not set): download this week's links as a file instead, which starts the round.\n",
    );
    const status = await runCliInProcess(['checkins', 'status', '--org', 'org_cli_r'], cdb.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      /^this week \(\d{4}-\d\d-\d\d\): started \S+\nWEEK +STARTED +DELIVERY +PEOPLE +MAILED +WAITING +FAILED +REMINDED +CLOSES\n\S+ +\S+ +file +6 +0 +0 +0 +0 +\S+\n$/,
    );
  }, 240_000);
});
