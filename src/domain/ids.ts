import { randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters of base62 from the strong random source (API keys, ids, demo names). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Ids carry a type prefix: org_, team_, act_, key_, al_, whe_, ... */
export const newId = (prefix: string) => `${prefix}_${randomBase62(16)}`;
