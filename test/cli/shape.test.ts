import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
