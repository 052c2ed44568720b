import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { shellWord } from '../../src/cli/hints.js';
import { createCliDatabase, runCliInProcess } from '../helpers/cli.js';
import { DB_KIND } from '../helpers/db.js';

/**
 * Issue 54, item 4: one CLI shape. Exit codes are 0 done, 1 refused with a reason, 2 usage (an
 * unknown command or option, a missing or invalid argument); a refusal is one line on stderr; the
 * hints a command prints name `npx climate-pulse` (what runs from a clone) with the database it used.
 */
describe(`the CLI's exit codes and hints (${DB_KIND})`, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
  });
  afterAll(async () => cdb?.close());

  it.each([
    [['no-such-command'], "error: unknown command 'no-such-command'"],
    [['keys', 'list', '--org', 'o', '--no-such-option'], "error: unknown option '--no-such-option'"],
    [['keys', 'list'], "error: required option '--org <id>' not specified"],
    [
      ['keys', 'create', '--org', 'o', '--scope', 'admin'],
      "error: option '--scope <scope>' argument 'admin' is invalid. Allowed choices are read_write, read.",
    ],
    [['pulses', 'moderate', '--org', 'o'], "error: missing required argument 'pulse-id'"],
  ])('%j is a usage error: exit 2, the reason first on stderr, nothing on stdout', async (args, reason) => {
    const r = await runCliInProcess([...args], cdb.env);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(reason);
    expect(r.stdout).toBe('');
  });

  it('a command group without its subcommand is a usage error too (exit 2, its help on stderr)', async () => {
    const r = await runCliInProcess(['keys'], cdb.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Usage: climate-pulse keys \[options\] \[command\]\n/);
  });

  it('--help is done (exit 0), and a refusal with a reason is exit 1 in one line on stderr', async () => {
    const help = await runCliInProcess(['keys', '--help'], cdb.env);
    expect(help.code).toBe(0);
    const refused = await runCliInProcess(['keys', 'list', '--org', 'org_nope'], cdb.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('climate-pulse: no organization "org_nope" (or it is deleted)\n');
    expect(refused.stdout).toBe('');
  });

  it('keys create names `npx climate-pulse` with the database in its revoke hint, never a bare `climate-pulse`', async () => {
    expect((await runCliInProcess(['orgs', 'create', '--id', 'org_shape', '--name', 'Shape', '--plan', 'business'], cdb.env)).code).toBe(0);
    const r = await runCliInProcess(['keys', 'create', '--org', 'org_shape'], cdb.env);
    expect(r.code).toBe(0);
    const id = /\((key_\w+)\)/.exec(r.stderr)?.[1];
    const cli = cdb.kind === 'pg' ? `DATABASE_URL=${shellWord(cdb.env.DATABASE_URL)} npx climate-pulse` : `DATA_DIR=${cdb.dir} npx climate-pulse`;
    expect(r.stderr.trim().endsWith(`Revoke with: ${cli} keys revoke --org org_shape ${id}`), r.stderr).toBe(true);
  });
});

describe(`--json beside the sentences (${DB_KIND})`, () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  beforeAll(async () => {
    cdb = await createCliDatabase();
  });
  afterAll(async () => cdb?.close());

  it('the commands that take no --json yet are exactly these (docs/decisions.md, "Issue 54")', () => {
    const leaves = (c: Command, path: string[] = []): [string, Command][] =>
      c.commands.length ? c.commands.flatMap((s) => leaves(s, [...path, s.name()])) : [[path.join(' '), c]];
    const without = leaves(buildProgram())
      .filter(([, c]) => !c.options.some((o) => o.long === '--json'))
      .map(([name]) => name)
      .sort();
    expect(without).toEqual([
      'alerts run',
      'audit export',
      'audit retention',
      'backup',
      'checkins links',
      'checkins participation',
      'checkins send',
      'citus distribute',
      'db copy',
      'demo',
      'import-pulses',
      'load',
      'respondents add',
      'respondents move',
      'respondents remove',
      'respondents replace',
      'respondents resend',
      'restore',
      'serve',
      'webhooks disable',
      'webhooks enable',
      'webhooks remove',
      'webhooks replay',
      'webhooks resend-failed',
      'webhooks test',
    ]);
  });

  it('runs both ways: a sentence by default, one JSON document with --json', async () => {
    const run = (args: string[]) => runCliInProcess(args, cdb.env);
    expect((await run(['orgs', 'create', '--id', 'org_json', '--name', 'Json', '--plan', 'business', '--json'])).code).toBe(0);
    const migrate = [await run(['migrate']), await run(['migrate', '--json'])];
    expect(migrate.map((r) => [r.code, r.stdout])).toEqual([
      [0, 'database is up to date\n'],
      [0, '{"applied":[]}\n'],
    ]);
    const made = await run(['keys', 'create', '--org', 'org_json', '--name', 'ci', '--json']);
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout) as { id: string; prefix: string; key: string; scope: string; expiresAt: null; orgId: string };
    expect(key).toEqual({ id: key.id, prefix: key.key.slice(0, key.prefix.length), key: key.key, scope: 'read_write', expiresAt: null, orgId: 'org_json' });
    expect(key.key).toMatch(/^cp_live_[0-9A-Za-z]{40}$/);
    const sentence = await run(['keys', 'create', '--org', 'org_json']);
    expect(sentence.stdout).toMatch(/^cp_live_[0-9A-Za-z]{40}\n$/);
    const revoked = await run(['keys', 'revoke', '--org', 'org_json', key.id, '--json']);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, prefix: key.prefix, orgId: 'org_json', revokedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const id = /\((key_\w+)\)/.exec(sentence.stderr)![1];
    expect((await run(['keys', 'revoke', '--org', 'org_json', id])).stdout).toMatch(new RegExp(`^revoked cp_live_\\S+ \\(${id}\\) of org_json\\n$`));
  });
});
