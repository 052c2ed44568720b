/**
 * `climate-pulse passkeys list|remove|require` (issue 55, item 6): the operator API's passkey
 * operations from the CLI, on the engine of this CI pass, without a running server. Sentences by
 * default, one JSON document with --json; exit 0 done, 1 refused with a reason (one line on
 * stderr), 2 usage. Ends with the way back in for a sole owner who lost every passkey.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember, memberActor } from '../../src/domain/members.js';
import { finishPasskeyRegistration, relyingPartyOf, startPasskeyRegistration, updateRequirePasskeys, type RelyingParty } from '../../src/domain/passkeys.js';
import { acceptInvitation, resolveSession, signIn, type ConsoleSession } from '../../src/domain/sessions.js';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { SoftAuthenticator } from '../console/passkeys-authenticator.js';
import { createCliDatabase, openApp, runCliInProcess as cli } from '../helpers/cli.js';
import { CONSOLE_PASSWORD } from '../helpers/console-client.js';

const ORIGIN = 'http://localhost:3000';
const rp = relyingPartyOf(ORIGIN) as RelyingParty;
const ORG = 'org_cli_pk';
const IP = '198.51.100.71';

async function addPasskey(db: DatabaseExecutor, s: ConsoleSession, device: SoftAuthenticator, name: string) {
  const actor = memberActor(s.member, IP);
  const started = await startPasskeyRegistration(db, rp, s, { password: CONSOLE_PASSWORD, name }, actor, new Date());
  return finishPasskeyRegistration(db, rp, s, { name, response: device.register(started.options) }, actor, new Date());
}

describe('climate-pulse passkeys', () => {
  let cdb: Awaited<ReturnType<typeof createCliDatabase>>;
  let owner: ConsoleSession;
  let viewerId: string;
  const device = new SoftAuthenticator(ORIGIN);
  const keys: { id: string; createdAt: string }[] = [];

  /** The database opened in this process for the domain's part (the console's), closed before the CLI runs. */
  async function withDb<T>(fn: (db: DatabaseExecutor) => Promise<T>): Promise<T> {
    const o = await openApp(cdb.env, { PUBLIC_BASE_URL: ORIGIN });
    try {
      return await fn(o.db);
    } finally {
      await o.close();
    }
  }

  beforeAll(async () => {
    cdb = await createCliDatabase();
    expect((await cli(['migrate'], cdb.env)).code).toBe(0);
    expect((await cli(['orgs', 'create', '--id', ORG, '--name', 'CLI Passkeys', '--plan', 'business'], cdb.env)).code).toBe(0);
    await withDb(async (db) => {
      const join = async (email: string, role: 'owner' | 'viewer') => {
        const inv = await inviteMember(db, ORG, { email, role }, operatorActor(null), new Date());
        const opened = await acceptInvitation(db, { token: inv.token, password: CONSOLE_PASSWORD }, IP, new Date());
        return (await resolveSession(db, opened.cookie, new Date()))!;
      };
      owner = await join('sole@cli-pk.example.com', 'owner');
      viewerId = (await join('viewer@cli-pk.example.com', 'viewer')).member.id;
      for (const name of ['Laptop', 'Phone']) keys.push((await addPasskey(db, owner, device, name)).passkey);
      await updateRequirePasskeys(db, ORG, true, memberActor(owner.member, IP), new Date());
    });
  }, 120_000);
  afterAll(() => cdb?.close());

  it('lists a member passkeys by address or id, as sentences and a table, or one JSON document', async () => {
    const start = (i: number) => device.credentials[i].id.toString('base64url').slice(0, 8);
    const table = await cli(['passkeys', 'list', '--org', ORG, '--member', 'SOLE@cli-pk.example.com'], cdb.env);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toBe(`sole@cli-pk.example.com (${owner.member.id}) has 2 passkeys in ${ORG}:`);
    expect(lines[1]).toMatch(/^ID +NAME +CREATED +LAST USED +SYNCED +CREDENTIAL$/);
    expect(lines[2].split(/ {2,}/)).toEqual([keys[0].id, 'Laptop', keys[0].createdAt, 'never', 'no', `${start(0)}…`]);
    expect(lines[3].split(/ {2,}/)).toEqual([keys[1].id, 'Phone', keys[1].createdAt, 'never', 'no', `${start(1)}…`]);
    expect(lines.slice(4)).toEqual(['']);
    const json = await cli(['passkeys', 'list', '--org', ORG, '--member', owner.member.id, '--json'], cdb.env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      orgId: ORG,
      memberId: owner.member.id,
      email: 'sole@cli-pk.example.com',
      items: keys.map((k, i) => ({
        id: k.id,
        name: i === 0 ? 'Laptop' : 'Phone',
        createdAt: k.createdAt,
        lastUsedAt: null,
        backedUp: false,
        credentialStart: start(i),
      })),
    });
    expect(json.stdout.split('\n')).toHaveLength(2); // one document, one line
    for (const c of device.credentials) expect(table.stdout + json.stdout).not.toContain(c.id.toString('base64url'));
    const none = await cli(['passkeys', 'list', '--org', ORG, '--member', viewerId], cdb.env);
    expect(none.stdout).toBe(`viewer@cli-pk.example.com (${viewerId}) has no passkey in ${ORG}\n`);
  }, 60_000);

  it('refuses with one line and exit 1, or exit 2 for a usage error', async () => {
    const nobody = await cli(['passkeys', 'list', '--org', ORG, '--member', 'nobody@cli-pk.example.com'], cdb.env);
    expect([nobody.code, nobody.stdout, nobody.stderr]).toEqual([
      1,
      '',
      `climate-pulse: no member "nobody@cli-pk.example.com" in ${ORG} (see: members list --org ${ORG})\n`,
    ]);
    const noOrg = await cli(['passkeys', 'require', '--org', 'org_nope', 'off'], cdb.env);
    expect([noOrg.code, noOrg.stdout, noOrg.stderr]).toEqual([1, '', 'climate-pulse: no organization "org_nope" (or it is deleted)\n']);
    const gone = await cli(['passkeys', 'remove', '--org', ORG, '--member', owner.member.id, 'pk_nope'], cdb.env);
    expect([gone.code, gone.stdout, gone.stderr]).toEqual([1, '', 'climate-pulse: No passkey "pk_nope" of this member.\n']);
    for (const [args, reason] of [
      [['passkeys', 'require', '--org', ORG, 'maybe'], "error: command-argument value 'maybe' is invalid for argument 'state'. Allowed choices are on, off."],
      [['passkeys', 'remove', '--org', ORG, '--member', viewerId], "error: missing required argument 'passkey'"],
      [['passkeys', 'list', '--org', ORG], "error: required option '--member <member>' not specified"],
    ] as const) {
      const r = await cli([...args], cdb.env);
      expect([r.code, r.stdout, r.stderr.split('\n')[0]], args.join(' ')).toEqual([2, '', reason]);
    }
  }, 60_000);

  it('a sole owner who lost every passkey gets back in: the operator removes them; the requirement stays', async () => {
    expect((await cli(['passkeys', 'require', '--org', ORG], cdb.env)).stdout).toBe(`passkeys are required for owners and admins in ${ORG}\n`);
    const removed = await cli(['passkeys', 'remove', '--org', ORG, '--member', 'sole@cli-pk.example.com', keys[0].id], cdb.env);
    expect([removed.code, removed.stdout]).toEqual([
      0,
      `removed the passkey "Laptop" (${keys[0].id}) of sole@cli-pk.example.com (${owner.member.id}) in ${ORG}\n`,
    ]);
    const last = await cli(['passkeys', 'remove', '--org', ORG, '--member', owner.member.id, keys[1].id, '--json'], cdb.env);
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toEqual({ id: keys[1].id, name: 'Phone', orgId: ORG, memberId: owner.member.id, removed: true });

    await withDb(async (db) => {
      // The password opens a session held by the requirement, where the owner adds a new passkey.
      const back = await signIn(db, { email: 'sole@cli-pk.example.com', password: CONSOLE_PASSWORD }, IP, new Date());
      const held = (await resolveSession(db, back.cookie, new Date()))!;
      expect(held.stage).toBe('passkey');
      const added = await addPasskey(db, held, new SoftAuthenticator(ORIGIN), 'New phone');
      expect((await resolveSession(db, added.renewed!.cookie, new Date()))!.stage).toBe('active');
    });

    const audit = await cli(['audit', '--org', ORG, '--json'], cdb.env);
    const events = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; actor: { kind: string; id: string | null }; address: string | null; details: unknown });
    const byOperator = events.filter((e) => e.action === 'member.passkey_removed');
    expect(byOperator.map((e) => [e.actor.kind, e.actor.id, e.address, e.details])).toEqual([
      ['operator', null, '127.0.0.1', { passkey: keys[1].id, name: 'Phone' }],
      ['operator', null, '127.0.0.1', { passkey: keys[0].id, name: 'Laptop' }],
    ]);
    expect(events[0].action).toBe('member.passkey_added');
  }, 60_000);

  it('turns the requirement off and on, as sentences or JSON, audited with the operator as actor', async () => {
    const off = await cli(['passkeys', 'require', '--org', ORG, 'off', '--json'], cdb.env);
    expect([off.code, off.stdout]).toEqual([0, `{"orgId":"${ORG}","required":false}\n`]);
    const on = await cli(['passkeys', 'require', '--org', ORG, 'on'], cdb.env);
    expect([on.code, on.stdout]).toEqual([0, `passkeys are required for owners and admins in ${ORG} from now on\n`]);
    const offAgain = await cli(['passkeys', 'require', '--org', ORG, 'off'], cdb.env);
    expect(offAgain.stdout).toBe(`passkeys are not required in ${ORG} from now on\n`);
    const audit = await cli(['audit', '--org', ORG, '--action', 'organization.passkeys_required', '--json'], cdb.env);
    const events = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { actor: { kind: string; id: string | null }; details: unknown });
    expect(events.map((e) => [e.actor.kind, e.actor.id, e.details])).toEqual([
      ['operator', null, { required: false }],
      ['operator', null, { required: true }],
      ['operator', null, { required: false }],
      ['member', owner.member.id, { required: true }],
    ]);
  }, 60_000);
});
