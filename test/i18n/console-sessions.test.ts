import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseAllowedWords, englishLeft, pseudoConsole, type PseudoConsole } from '../helpers/pseudo.js';

/** Issue 57: the layout, the navigation and the Sessions page in the pseudo-locale, with no English left. */
let p: PseudoConsole;
beforeAll(async () => {
  p = await pseudoConsole();
});
afterAll(() => p?.t.close());

describe('the console in the pseudo-locale', () => {
  it('a word of English left in a template is found, with its text; data and dates are not', () => {
    const allowed = new Set([...baseAllowedWords(), 'Acme']);
    expect(englishLeft('<p>[Šéééššííóóñš] Sign out</p><p title="Delete it">Acme · 7 Dec</p><code>GET /v1</code>', allowed)).toEqual([
      'Sign out  ←  [Šéééššííóóñš] Sign out',
      'Delete it  ←  Delete it',
    ]);
  });

  it('the Sessions page, its layout and navigation come from the catalogue', async () => {
    const owner = await p.member('owner');
    const res = await owner.get('/console/sessions');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<html lang="en-XA">');
    expect(englishLeft(res.body, p.allowed)).toEqual([]);
  });

  it('an Arabic reader gets the page right to left', async () => {
    const owner = await p.member('owner');
    owner.headers['accept-language'] = 'ar, en;q=0.5';
    const res = await owner.get('/console/sessions');
    expect(res.body).toContain('<html lang="ar" dir="rtl">');
    expect(res.body).toContain('<h1>الجلسات</h1>');
  });
});
