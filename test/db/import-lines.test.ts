import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { lines } from '../../src/domain/import.js';

/**
 * The importer's line reader breaks lines as readline did (LF, CRLF, a lone CR), whatever the
 * chunks, and pulls the next chunk only when the last one's lines are taken.
 */
const collect = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
};
const viaReadline = (text: string) => collect(createInterface({ input: Readable.from([Buffer.from(text)]), crlfDelay: Infinity }));
/** The text's bytes cut at every position given. */
const chunked = (text: string, cuts: number[]) => {
  const bytes = Buffer.from(text);
  const at = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  return at.slice(1).map((end, i) => bytes.subarray(at[i], end));
};

describe('the import line reader', () => {
  const samples = [
    '{"a":1}\n{"b":2}\n',
    '{"a":1}\r\n{"b":2}\r\n',
    'one\rtwo\r\nthree\n\nfive',
    'no newline at all',
    '\n\n\r\n',
    'trailing cr\r',
    'é😀 multibyte\r\nsplit 😀 everywhere\n',
    '',
  ];
  it('gives the lines readline gives, for every way of cutting the bytes into chunks', async () => {
    for (const text of samples) {
      const expected = await viaReadline(text);
      const n = Buffer.byteLength(text);
      for (let a = 0; a <= n; a++) {
        for (const b of [a + 1, a + 2, a + 3]) {
          expect(await collect(lines(Readable.from(chunked(text, [a, b])))), `${JSON.stringify(text)} cut at ${a}, ${b}`).toEqual(expected);
        }
      }
    }
  });

  it('reads a chunk only when the lines before it are taken', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield Buffer.from(`line ${i}\n`);
      }
    }
    const it = lines(source());
    await it.next();
    await it.next();
    expect(pulled).toBe(2);
  });
});
