import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWebhookUrl, refusedAddressKind, safeLookup } from '../../src/domain/webhook-deliveries.js';
import { createAdminTest, type AdminTest } from '../admin/helpers.js';

const refusal = (host: string, kind: string) => `the URL points to a ${kind} address (${host}); webhooks go to public hosts only`;

/** Each range the rule missed, with addresses at its start, inside and at its end. */
const MISSED: [string, string[], string][] = [
  ['64:ff9b:1::/48 (local-use NAT64)', ['64:ff9b:1::', '64:ff9b:1::808:808', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'], 'private'],
  ['::ffff:0:0:0/96 (SIIT) with a public IPv4', ['::ffff:0:100:1', '::ffff:0:808:808', '::ffff:0:dfff:ffff'], 'reserved'],
  ['3fff::/20 (documentation)', ['3fff::', '3fff::1', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'], 'reserved'],
  ['5f00::/16 (SRv6 SIDs)', ['5f00::', '5f00:1234::1', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], 'reserved'],
];

describe('the webhook address rule', () => {
  it.each(MISSED)('refuses %s, written in the URL and resolved from a name', async (_range, addresses, kind) => {
    for (const address of addresses) {
      expect(refusedAddressKind(address), address).toBe(kind);
      const host = new URL(`https://[${address}]/`).hostname.slice(1, -1); // as the URL parser writes it
      expect(() => checkWebhookUrl(`https://[${address}]/hook`), address).toThrow(refusal(host, kind));
      const err = await new Promise<Error | null>((resolve) =>
        safeLookup({}, ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
          cb(null, [{ address, family: 6 }])) as never)('hooks.example.com', { family: 0 } as never, (e) => resolve(e)),
      );
      expect(err?.message, address).toBe(`hooks.example.com resolves to a ${kind} address`);
    }
  });

  it('just past those ranges: public global unicast stays public; anything outside global unicast is refused', () => {
    expect(refusedAddressKind('3fff:1000::1')).toBeNull(); // past 3fff::/20
    expect(refusedAddressKind('2606:4700:4700::1111')).toBeNull();
    expect(refusedAddressKind('64:ff9b::808:808')).toBeNull(); // the well-known NAT64 prefix carries a public IPv4
    for (const address of ['64:ff9b:2::1', '5eff:ffff::1', '4000::1', '::1:2:3:4', '100:0:0:1::1'])
      expect(refusedAddressKind(address), address).toBe('reserved');
  });

  it('an IPv4 address written in IPv6 (mapped, SIIT, compatible, NAT64, 6to4) is judged as that IPv4, in every notation', () => {
    const loopback = [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '::ffff:0:127.0.0.1',
      '::ffff:0:7f00:1',
      '::127.0.0.2',
      '64:ff9b::127.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
    ];
    for (const address of loopback) expect(refusedAddressKind(address), address).toBe('loopback');
    for (const address of ['::ffff:169.254.169.254', '::ffff:0:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1'])
      expect(refusedAddressKind(address), address).toBe('link-local');
    for (const address of ['::ffff:10.1.2.3', '::ffff:0:10.1.2.3', '64:ff9b:1::10.1.2.3', '2002:c0a8:101::'])
      expect(refusedAddressKind(address), address).toBe('private');
    // A public IPv4 in a form that reaches it stays public; in SIIT's form it is not an address to connect to.
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) expect(refusedAddressKind(address), address).toBeNull();
    expect(refusedAddressKind('::ffff:0:8.8.8.8')).toBe('reserved');
  });

  describe('through the operator API', () => {
    let t: AdminTest;
    beforeAll(async () => {
      t = await createAdminTest({ dataset: { organizations: [{ id: 'org_h', name: 'H', plan: 'business', createdAt: '2026-01-01T00:00:00.000Z' }] } });
    });
    afterAll(() => t.close());

    it('adding an endpoint on one of the missed ranges is 400 invalid_request, and none is stored', async () => {
      for (const [, [, address], kind] of MISSED) {
        const host = new URL(`https://[${address}]/`).hostname.slice(1, -1);
        const res = await t.call('POST', '/admin/v1/organizations/org_h/webhook-endpoints', { url: `https://[${address}]/hook` });
        expect(res.statusCode, address).toBe(400);
        expect(res.json()).toEqual({ error: { code: 'invalid_request', message: refusal(host, kind) } });
      }
      expect((await t.call('GET', '/admin/v1/organizations/org_h/webhook-endpoints')).json()).toEqual({ items: [] });
    });
  });
});
