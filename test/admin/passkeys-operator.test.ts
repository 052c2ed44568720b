/**
 * Issue 55, item 6: the operator API's passkey operations. A member's passkeys (never the public
 * key or the whole credential id), removing one, and the organization's "passkeys required for
 * owners and admins", each audited as the console's own with the operator as actor; and the way
 * back in for a sole owner who lost every passkey: the operator removes it, or stops the requirement.
 * Sign-in runs through the domain (the console's pages over it are test/console/passkeys-http.test.ts).
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember, memberActor } from '../../src/domain/members.js';
import { finishPasskeyRegistration, relyingPartyOf, startPasskeyRegistration, updateRequirePasskeys, type RelyingParty } from '../../src/domain/passkeys.js';
import { acceptInvitation, resolveSession, signIn, type ConsoleSession } from '../../src/domain/sessions.js';
import { completeTwoFactor, enrollTotp, PASSKEY_REQUIRED_NOT_CODE, startTotpEnrollment, TWO_FACTOR_REFUSED } from '../../src/domain/totp.js';
import { SoftAuthenticator } from '../console/passkeys-authenticator.js';
import { CONSOLE_PASSWORD } from '../helpers/console-client.js';
import { createAdminTest, type AdminTest } from './helpers.js';

const ORIGIN = 'http://localhost:3000';
const rp = relyingPartyOf(ORIGIN) as RelyingParty;
const IP = '198.51.100.61';
const codeAt = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: at.getTime() });

let t: AdminTest;
beforeAll(async () => {
  t = await createAdminTest({ env: { PUBLIC_BASE_URL: ORIGIN } });
  for (const id of ['org_pk1', 'org_pk2', 'org_pk3']) {
    expect((await t.call('POST', '/admin/v1/organizations', { id, name: id, plan: 'business' })).statusCode).toBe(201);
  }
}, 60_000);
afterAll(() => t?.close());

const session = async (cookie: string) => (await resolveSession(t.db, cookie, new Date()))!;

/** A member invited by the operator and signed in through their invitation: their first session. */
async function join(orgId: string, email: string, role: 'owner' | 'admin' | 'viewer'): Promise<ConsoleSession> {
  const inv = await inviteMember(t.db, orgId, { email, role }, operatorActor(null), new Date());
  const opened = await acceptInvitation(t.db, { token: inv.token, password: CONSOLE_PASSWORD }, IP, new Date());
  return session(opened.cookie);
}

/** Adds a passkey as the Account page does: the password again, then the device's answer. */
async function addPasskey(s: ConsoleSession, device: SoftAuthenticator, name: string) {
  const actor = memberActor(s.member, IP);
  const started = await startPasskeyRegistration(t.db, rp, s, { password: CONSOLE_PASSWORD, name }, actor, new Date());
  return finishPasskeyRegistration(t.db, rp, s, { name, response: device.register(started.options) }, actor, new Date());
}

const auditRows = (orgId: string, action: string) =>
  t.db.query<{ actor_kind: string; actor_id: string | null; target_kind: string; target_id: string; details: unknown }>(
    sql(
      't.pk_op_audit',
      `SELECT actor_kind, actor_id, target_kind, target_id, details FROM audit_events WHERE org_id = $1 AND action = $2 ORDER BY created_at, id`,
    ),
    [orgId, action],
  );

describe('a member passkeys through the operator API', () => {
  it('lists them without the key or the whole credential id, removes one (audited), and refuses unknown ones', async () => {
    const owner = await join('org_pk1', 'owner@pk1.example.com', 'owner');
    const viewer = await join('org_pk1', 'viewer@pk1.example.com', 'viewer');
    const device = new SoftAuthenticator(ORIGIN);
    const laptop = (await addPasskey(owner, device, 'Laptop')).passkey;
    const phone = (await addPasskey(owner, device, 'Phone')).passkey;
    const url = `/admin/v1/organizations/org_pk1/members/${owner.member.id}/passkeys`;

    const list = await t.call('GET', url);
    expect(list.statusCode).toBe(200);
    const start = (i: number) => device.credentials[i].id.toString('base64url').slice(0, 8);
    expect(list.json()).toEqual({
      items: [
        { id: laptop.id, name: 'Laptop', createdAt: laptop.createdAt, lastUsedAt: null, backedUp: false, credentialStart: start(0) },
        { id: phone.id, name: 'Phone', createdAt: phone.createdAt, lastUsedAt: null, backedUp: false, credentialStart: start(1) },
      ],
    });
    for (const c of device.credentials) expect(list.body).not.toContain(c.id.toString('base64url'));
    const [{ public_key }] = await t.db.query<{ public_key: Uint8Array }>(sql('t.pk_key', `SELECT public_key FROM member_passkeys WHERE id = $1`), [laptop.id]);
    expect(list.body).not.toContain(Buffer.from(public_key).toString('base64url'));
    expect(list.body).not.toContain(Buffer.from(public_key).toString('base64'));
    expect((await t.call('GET', `/admin/v1/organizations/org_pk1/members/${viewer.member.id}/passkeys`)).json()).toEqual({ items: [] });

    // Removing: the answer is the passkey as removed; it is gone and audited as the console's removal.
    const removed = await t.call('DELETE', `${url}/${laptop.id}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({
      id: laptop.id,
      name: 'Laptop',
      createdAt: laptop.createdAt,
      lastUsedAt: null,
      backedUp: false,
      credentialStart: start(0),
    });
    expect((await t.call('GET', url)).json().items.map((p: { id: string }) => p.id)).toEqual([phone.id]);
    expect(await auditRows('org_pk1', 'member.passkey_removed')).toEqual([
      { actor_kind: 'operator', actor_id: null, target_kind: 'member', target_id: owner.member.id, details: { passkey: laptop.id, name: 'Laptop' } },
    ]);

    // Refusals, in the contract's shape; nothing else changes.
    const again = await t.call('DELETE', `${url}/${laptop.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().error).toMatchObject({ code: 'not_found', message: `No passkey "${laptop.id}" of this member.` });
    // Another member's passkey, named under this member: not found either.
    const other = await t.call('DELETE', `/admin/v1/organizations/org_pk1/members/${viewer.member.id}/passkeys/${phone.id}`);
    expect(other.statusCode).toBe(404);
    expect(other.json().error).toMatchObject({ code: 'not_found', message: `No passkey "${phone.id}" of this member.` });
    const nobody = await t.call('GET', '/admin/v1/organizations/org_pk1/members/mem_nobody/passkeys');
    expect(nobody.statusCode).toBe(404);
    expect(nobody.json().error).toMatchObject({ code: 'not_found', message: 'No member "mem_nobody" in this organization.' });
    // The member of another organization is not found under this one.
    const elsewhere = await t.call('GET', `/admin/v1/organizations/org_pk2/members/${owner.member.id}/passkeys`);
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().error.code).toBe('not_found');
    const noOrg = await t.call('DELETE', `/admin/v1/organizations/org_nope/members/${owner.member.id}/passkeys/${phone.id}`);
    expect(noOrg.statusCode).toBe(404);
    expect(noOrg.json().error).toMatchObject({ code: 'not_found', message: 'no organization "org_nope" (or it is deleted)' });
    expect((await t.call('GET', url)).json().items.map((p: { id: string }) => p.id)).toEqual([phone.id]);
    expect(await auditRows('org_pk1', 'member.passkey_removed')).toHaveLength(1);
  });

  it('reads and sets the requirement (audited, no passkey of its own needed), and refuses a bad body', async () => {
    const url = '/admin/v1/organizations/org_pk2/passkey-settings';
    expect((await t.call('GET', url)).json()).toEqual({ required: false });
    const on = await t.call('PATCH', url, { required: true });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toEqual({ required: true });
    expect((await t.call('GET', url)).json()).toEqual({ required: true });
    const off = await t.call('PATCH', url, { required: false });
    expect(off.json()).toEqual({ required: false });
    expect(await auditRows('org_pk2', 'organization.passkeys_required')).toEqual([
      { actor_kind: 'operator', actor_id: null, target_kind: 'organization', target_id: 'org_pk2', details: { required: true } },
      { actor_kind: 'operator', actor_id: null, target_kind: 'organization', target_id: 'org_pk2', details: { required: false } },
    ]);
    for (const body of [{ required: 'yes' }, {}, { required: true, extra: 1 }]) {
      const bad = await t.call('PATCH', url, body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(bad.json().error.code).toBe('invalid_request');
    }
    const noOrg = await t.call('PATCH', '/admin/v1/organizations/org_nope/passkey-settings', { required: false });
    expect(noOrg.statusCode).toBe(404);
    expect(noOrg.json().error).toMatchObject({ code: 'not_found', message: 'no organization "org_nope" (or it is deleted)' });
    expect((await t.call('GET', '/admin/v1/organizations/org_nope/passkey-settings')).statusCode).toBe(404);
    expect(await auditRows('org_pk2', 'organization.passkeys_required')).toHaveLength(2);
  });
});

describe('the way back in for a sole owner who lost every passkey', () => {
  it('without two-factor codes: the operator removes the passkey; the owner signs in, is held, and adds a new one', async () => {
    const owner = await join('org_pk3', 'sole@pk3.example.com', 'owner');
    const lost = new SoftAuthenticator(ORIGIN);
    const { passkey } = await addPasskey(owner, lost, 'Lost phone');
    await updateRequirePasskeys(t.db, 'org_pk3', true, memberActor(owner.member, IP), new Date());
    // The device is gone: the password leads only to the passkey step, which has nothing to answer.
    const half = await signIn(t.db, { email: 'sole@pk3.example.com', password: CONSOLE_PASSWORD }, IP, new Date());
    expect(half.stage).toBe('totp');
    // Stopping the requirement does not help one without an authenticator app: a passkey is still
    // their second factor, and they have no code to give instead (docs/console.md, "Passkeys").
    expect((await t.call('PATCH', '/admin/v1/organizations/org_pk3/passkey-settings', { required: false })).json()).toEqual({ required: false });
    const still = await signIn(t.db, { email: 'sole@pk3.example.com', password: CONSOLE_PASSWORD }, IP, new Date());
    expect(still.stage).toBe('totp');
    await expect(completeTwoFactor(t.db, await session(still.cookie), '123456', IP, new Date())).rejects.toMatchObject({
      code: 'unauthorized',
      message: TWO_FACTOR_REFUSED,
    });
    expect((await t.call('PATCH', '/admin/v1/organizations/org_pk3/passkey-settings', { required: true })).json()).toEqual({ required: true });

    const removed = await t.call('DELETE', `/admin/v1/organizations/org_pk3/members/${owner.member.id}/passkeys/${passkey.id}`);
    expect(removed.statusCode).toBe(200);
    expect((await t.call('GET', '/admin/v1/organizations/org_pk3/passkey-settings')).json()).toEqual({ required: true });
    // The password now opens a session held by the requirement, where the owner adds a passkey.
    const back = await signIn(t.db, { email: 'sole@pk3.example.com', password: CONSOLE_PASSWORD }, IP, new Date());
    const held = await session(back.cookie);
    expect(held.stage).toBe('passkey');
    const added = await addPasskey(held, new SoftAuthenticator(ORIGIN), 'New phone');
    expect(added.renewed).not.toBeNull();
    expect((await session(added.renewed!.cookie)).stage).toBe('active');
    expect(
      (await t.call('GET', `/admin/v1/organizations/org_pk3/members/${owner.member.id}/passkeys`)).json().items.map((p: { name: string }) => p.name),
    ).toEqual(['New phone']);
  });

  it('with two-factor codes: the operator stops the requirement and the code signs in again', async () => {
    await t.call('PATCH', '/admin/v1/organizations/org_pk1/passkey-settings', { required: false });
    const owner = await join('org_pk1', 'coded@pk1.example.com', 'owner');
    const { secret } = await startTotpEnrollment(t.db, owner);
    const t0 = Date.now();
    await enrollTotp(t.db, owner, { code: codeAt(secret, new Date(t0)), password: CONSOLE_PASSWORD }, memberActor(owner.member, IP), new Date(t0));
    await addPasskey(await session((await signInWithCode(secret, t0 + 60_000)).cookie), new SoftAuthenticator(ORIGIN), 'Lost key');
    await updateRequirePasskeys(t.db, 'org_pk1', true, memberActor(owner.member, IP), new Date());

    // Required, and the owner has a passkey: a code is refused.
    await expect(signInWithCode(secret, t0 + 120_000)).rejects.toMatchObject({ code: 'unauthorized', message: PASSKEY_REQUIRED_NOT_CODE });
    const off = await t.call('PATCH', '/admin/v1/organizations/org_pk1/passkey-settings', { required: false });
    expect(off.json()).toEqual({ required: false });
    const opened = await signInWithCode(secret, t0 + 180_000);
    expect(opened.stage).toBe('active');
    const rows = await auditRows('org_pk1', 'organization.passkeys_required');
    expect(rows.at(-1)).toEqual({ actor_kind: 'operator', actor_id: null, target_kind: 'organization', target_id: 'org_pk1', details: { required: false } });
    expect(rows.at(-2)).toMatchObject({ actor_kind: 'member', actor_id: owner.member.id, details: { required: true } });
  });
});

/** The password, then a code of `secret` at `ms`: the new session. */
async function signInWithCode(secret: string, ms: number) {
  const at = new Date(ms);
  const half = await signIn(t.db, { email: 'coded@pk1.example.com', password: CONSOLE_PASSWORD }, IP, at);
  expect(half.stage).toBe('totp');
  return completeTwoFactor(t.db, (await resolveSession(t.db, half.cookie, at))!, codeAt(secret, at), IP, at);
}
