import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { shellWord } from '../../src/cli/hints.js';
import { createCliDatabase, runCliInProcess } from '../helpers/cli.js';
import { DB_KIND, POSTGRES_FOLLOWS } from '../helpers/db.js';

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

  const leaves = (c: Command, path: string[] = []): [string, Command][] =>
    c.commands.flatMap((s) => {
      const here: [string, Command][] =
        s.commands.length === 0 || (s as unknown as { _actionHandler: unknown })._actionHandler ? [[[...path, s.name()].join(' '), s]] : [];
      return [...here, ...leaves(s, [...path, s.name()])];
    });

  it('every command takes --json but serve, whose stdout is the JSON log already (docs/decisions.md, "One CLI shape")', () => {
    const without = leaves(buildProgram())
      .filter(([, c]) => !c.options.some((o) => o.long === '--json'))
      .map(([name]) => name)
      .sort();
    expect(without).toEqual(['serve']);
  });

  /**
   * Every command, run both ways in turn on one database: without --json it prints sentences (or
   * a table, or a secret alone), with --json one JSON document (JSON lines for the audit log);
   * either way the same exit code, and a refusal is one line on stderr with nothing on stdout.
   * Each entry gives the arguments of its two runs (a change is made twice, on two things).
   */
  it('runs every command both ways', async () => {
    const embedded = cdb.kind === 'pglite';
    const env = { ...cdb.env, WEBHOOK_ALLOW_PRIVATE: 'true' }; // endpoints on 127.0.0.1, which no one serves
    const run = (args: string[]) => runCliInProcess(args, env);
    const dir = mkdtempSync(join(tmpdir(), 'cp-shape-'));
    try {
      const ds = join(dir, 'ds.json');
      writeFileSync(ds, JSON.stringify({ organizations: [{ id: 'org_both', name: 'Both', plan: 'business', createdAt: '2026-01-05T09:00:00.000Z' }] }));
      expect((await run(['load', ds])).code).toBe(0);
      for (const i of [0, 1]) {
        writeFileSync(
          join(dir, `ds${i}.json`),
          JSON.stringify({ organizations: [{ id: `org_loaded${i}`, name: 'Loaded', plan: 'business', createdAt: '2026-01-05T09:00:00.000Z' }] }),
        );
      }
      const rows = join(dir, 'rows.ndjson');
      const pulse = (id: string) =>
        JSON.stringify({ id, level: 3, reason: null, comment: null, moderationStatus: 'CLEAN', subteamId: null, createdAt: '2026-11-02T10:00:00.000Z' });
      writeFileSync(rows, `${pulse('p_0')}\n${pulse('p_1')}\n`);
      const roster = join(dir, 'roster.csv');
      writeFileSync(roster, 'email,team\nr1@both.test,Web\n');
      const id = async (args: string[], field: string) => {
        const r = await run([...args, '--json']);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        return (JSON.parse(r.stdout) as Record<string, string>)[field];
      };
      // What the commands below act on, two of each where a command changes it.
      const keys = [await id(['keys', 'create', '--org', 'org_both'], 'id'), await id(['keys', 'create', '--org', 'org_both'], 'id')];
      const hooks = [
        await id(['webhooks', 'add', '--org', 'org_both', '--url', 'http://127.0.0.1:9/hook'], 'id'),
        await id(['webhooks', 'add', '--org', 'org_both', '--url', 'http://127.0.0.1:9/hook2'], 'id'),
      ];
      const invites = [
        await id(['members', 'invite', '--org', 'org_both', '--email', 'a@both.test', '--role', 'viewer'], 'id'),
        await id(['members', 'invite', '--org', 'org_both', '--email', 'b@both.test', '--role', 'viewer'], 'id'),
      ];
      const people = [
        await id(['respondents', 'add', '--org', 'org_both', '--email', 'p1@both.test'], 'id'),
        await id(['respondents', 'add', '--org', 'org_both', '--email', 'p2@both.test'], 'id'),
      ];
      const twice = (f: (i: number) => string[]) => f;
      const same = (args: string[]) => () => args;
      const CASES: Record<string, (i: number) => string[]> = {
        'alerts run': same(['alerts', 'run', '--org', 'org_both']),
        'alerts mark-read': same(['alerts', 'mark-read', '--org', 'org_both', 'alt_none']),
        audit: same(['audit', '--org', 'org_both', '--limit', '2']),
        'audit export': same(['audit', '--org', 'org_both', 'export']),
        'audit retention': same(['audit', '--org', 'org_both', 'retention']),
        backup: twice((i) => ['backup', join(dir, `b${i}.tar.gz`)]),
        restore: same(['restore', join(dir, 'b0.tar.gz')]), // into a new DATA_DIR each time (below)
        'checkins send': same(['checkins', 'send', '--org', 'org_both']),
        'checkins status': same(['checkins', 'status', '--org', 'org_both']),
        'checkins links': same(['checkins', 'links', '--org', 'org_nope']),
        'checkins participation': same(['checkins', 'participation', '--org', 'org_both']),
        'citus distribute': same(['citus', 'distribute']),
        'db copy': same(['db', 'copy', '--to', 'postgres://nobody@127.0.0.1:1/none']),
        demo: same(['demo']),
        'import-pulses': same(['import-pulses', '--org', 'org_both', '--on-error', 'skip', rows]),
        load: twice((i) => ['load', join(dir, `ds${i}.json`)]),
        'keys create': same(['keys', 'create', '--org', 'org_both']),
        'keys list': same(['keys', 'list', '--org', 'org_both']),
        'keys revoke': twice((i) => ['keys', 'revoke', '--org', 'org_both', keys[i]]),
        'members invite': twice((i) => ['members', 'invite', '--org', 'org_both', '--email', `c${i}@both.test`, '--role', 'viewer']),
        'members list': same(['members', 'list', '--org', 'org_both']),
        'members remove': same(['members', 'remove', '--org', 'org_both', 'mem_none']),
        'members set-role': same(['members', 'set-role', '--org', 'org_both', 'mem_none', '--role', 'viewer']),
        'members invitations list': same(['members', 'invitations', 'list', '--org', 'org_both']),
        'members invitations revoke': twice((i) => ['members', 'invitations', 'revoke', '--org', 'org_both', invites[i]]),
        migrate: same(['migrate']),
        'orgs create': twice((i) => ['orgs', 'create', '--id', `org_made${i}`, '--name', 'Made', '--plan', 'business']),
        'orgs list': same(['orgs', 'list']),
        'orgs show': same(['orgs', 'show', '--org', 'org_both']),
        'orgs update': twice((i) => ['orgs', 'update', '--org', 'org_both', '--members', String(10 + i)]),
        'orgs delete': twice((i) => ['orgs', 'delete', '--org', `org_made${i}`]),
        'plans set': twice((i) => ['plans', 'set', `plan${i}`, '--rest-api', 'yes', '--rate-limit', '100']),
        'pulses moderate': same(['pulses', 'moderate', '--org', 'org_both', 'p_none', 'FLAGGED']),
        'respondents add': twice((i) => ['respondents', 'add', '--org', 'org_both', '--email', `q${i}@both.test`, '--team', 'Web']),
        'respondents list': same(['respondents', 'list', '--org', 'org_both']),
        'respondents move': twice((i) => ['respondents', 'move', '--org', 'org_both', people[i], '--team', 'Ops']),
        'respondents remove': twice((i) => ['respondents', 'remove', '--org', 'org_both', people[i]]),
        'respondents resend': same(['respondents', 'resend', '--org', 'org_both', 'rsp_none']),
        'respondents replace': same(['respondents', 'replace', '--org', 'org_both', roster]),
        'webhooks add': twice((i) => ['webhooks', 'add', '--org', 'org_both', '--url', `http://127.0.0.1:9/more${i}`]),
        'webhooks list': same(['webhooks', 'list', '--org', 'org_both']),
        'webhooks disable': twice((i) => ['webhooks', 'disable', hooks[i]]),
        'webhooks enable': twice((i) => ['webhooks', 'enable', hooks[i]]),
        'webhooks rotate-secret': twice((i) => ['webhooks', 'rotate-secret', hooks[i]]),
        'webhooks resend-failed': same(['webhooks', 'resend-failed', '--org', 'org_both', '--since', '1d']),
        'webhooks test': same(['webhooks', 'test', 'whe_none']),
        'webhooks deliveries': same(['webhooks', 'deliveries', '--org', 'org_both']),
        'webhooks replay': same(['webhooks', 'replay', 'whd_none']),
        'webhooks remove': twice((i) => ['webhooks', 'remove', hooks[i]]),
        'sso show': same(['sso', 'show', '--org', 'org_both']),
        'sso oidc': same(['sso', 'oidc', '--org', 'org_both', '--issuer', 'http://127.0.0.1:9/idp', '--client-id', 'cp']),
        'sso require': same(['sso', 'require', '--org', 'org_both', '--state', 'on']),
        'sso saml': same(['sso', 'saml', '--org', 'org_both', '--metadata-url', 'http://127.0.0.1:9/idp-metadata']),
        'sso remove': same(['sso', 'remove', '--org', 'org_both']),
        'sso domains add': twice((i) => ['sso', 'domains', 'add', '--org', 'org_both', `d${i}.both.test`]),
        'sso domains list': same(['sso', 'domains', 'list', '--org', 'org_both']),
        'sso domains verify': same(['sso', 'domains', 'verify', '--org', 'org_both', 'none.both.test', '--by', 'operator']),
        'sso domains remove': twice((i) => ['sso', 'domains', 'remove', '--org', 'org_both', `d${i}.both.test`]),
        'scim create': same(['scim', 'create', '--org', 'org_both']),
        'scim list': same(['scim', 'list', '--org', 'org_both']),
        'scim roll': same(['scim', 'roll', '--org', 'org_both', 'sct_none']),
        'scim revoke': same(['scim', 'revoke', '--org', 'org_both', 'sct_none']),
        'scim teams': same(['scim', 'teams', '--org', 'org_both']),
        'passkeys list': same(['passkeys', 'list', '--org', 'org_both', '--member', 'mem_none']),
        'passkeys remove': same(['passkeys', 'remove', '--org', 'org_both', '--member', 'mem_none', 'pk_none']),
        'passkeys require': same(['passkeys', 'require', '--org', 'org_both']),
      };
      const names = leaves(buildProgram())
        .map(([name]) => name)
        .filter((n) => n !== 'serve');
      expect(Object.keys(CASES).sort()).toEqual([...names].sort());
      /** Printed as JSON by default too (docs/decisions.md, "One CLI shape"). */
      const JSON_ANYWAY = ['import-pulses', 'audit export'];
      // What a command prints depends on the engine only for these (the others print what the
      // domain answered): in .ci/run's PGlite pass, only they run here, and all of them in its
      // PostgreSQL pass (POSTGRES_FOLLOWS, test/helpers/db.ts).
      const ENGINE_SPECIFIC = ['backup', 'restore', 'db copy', 'citus distribute', 'migrate'];
      const here = Object.entries(CASES).filter(([name]) => !POSTGRES_FOLLOWS || ENGINE_SPECIFIC.includes(name));
      const outcomes: Record<string, number> = {};
      for (const [name, args] of here) {
        // A restore goes into a new DATA_DIR each time.
        const envOf = (i: number) => (name === 'restore' && embedded ? { ...env, DATA_DIR: join(dir, `restored${i}`) } : env);
        const plain = await runCliInProcess(args(0), envOf(0));
        const json = await runCliInProcess([...args(1), '--json'], envOf(1));
        const what = `${name}: ${plain.stderr.slice(0, 300)} | ${json.stderr.slice(0, 300)}`;
        expect(json.code, what).toBe(plain.code);
        expect([0, 1], what).toContain(plain.code);
        outcomes[name] = plain.code;
        if (plain.code === 1) {
          for (const r of [plain, json]) {
            expect(r.stdout, what).toBe('');
            expect(r.stderr, what).toMatch(/^climate-pulse: [^\n]+\n$/);
          }
          continue;
        }
        const lines = name === 'audit' || name === 'audit export' ? json.stdout.split('\n').filter(Boolean) : [json.stdout];
        for (const l of lines) expect(() => JSON.parse(l), `${name} --json: ${json.stdout.slice(0, 300)}`).not.toThrow();
        if (!JSON_ANYWAY.includes(name) && plain.stdout.trim() !== '') {
          expect(() => JSON.parse(plain.stdout), `${name} prints JSON by default: ${plain.stdout.slice(0, 200)}`).toThrow();
        }
      }
      // The refusals are the ones expected (a thing that does not exist, a setting this engine lacks).
      const refused = Object.keys(outcomes)
        .filter((n) => outcomes[n] === 1)
        .sort();
      expect(refused).toEqual(
        [
          'alerts mark-read',
          'checkins links',
          'checkins send',
          'citus distribute',
          'db copy',
          'members remove',
          'members set-role',
          'pulses moderate',
          'respondents resend',
          'webhooks replay',
          'webhooks test',
          // Nothing to show, change or remove in an organization without an IdP, a token or a member of that id.
          'passkeys list',
          'passkeys remove',
          'scim revoke',
          'scim roll',
          'sso domains verify',
          'sso oidc',
          'sso remove',
          'sso require',
          'sso saml',
          'sso show',
          ...(embedded ? [] : ['backup', 'restore']),
        ]
          .filter((name) => here.some(([ran]) => ran === name))
          .sort(),
      );
      expect(here.length).toBe(POSTGRES_FOLLOWS ? ENGINE_SPECIFIC.length : names.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

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
