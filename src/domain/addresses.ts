import { isIP } from 'node:net';

/*
 * Client addresses as the limits count them: the console's password checks (passwords.ts) and the
 * public API's failed authentications (src/public/plugins/rate-limit.ts) both key an address by
 * addressKey, so one subscriber's IPv6 /64 is one address everywhere (issue 52, M2).
 */

/**
 * The key of a client address in the limits and the gate: an IPv6 address stands for its /64 (what
 * one subscriber is given, so 2^64 addresses are one), an IPv4-mapped IPv6 address for its IPv4
 * address; anything else (an IPv4 address, no address) is itself.
 */
export function addressKey(address: string): string {
  const bare = address.split('%')[0];
  if (isIP(bare) !== 6) return address;
  const g = ipv6Groups(bare);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (net.isIP said so). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const tail: number[] = [];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, v4.index);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => Number.parseInt(h, 16)));
  const [head, rest] = text.split('::');
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const zeros = 8 - tail.length - left.length - right.length;
  return [...left, ...Array.from({ length: Math.max(0, zeros) }, () => 0), ...right, ...tail];
}
