import { describe, expect, it } from 'vitest';
import { linksCsv } from '../../src/domain/checkins/rounds.js';

// The links file is opened in spreadsheets: a team named by a stranger must not run as a formula, on any face.
describe('the links file', () => {
  it('quotes what needs it and defuses formulas, the same for the console and the CLI', () => {
    const links = [
      { email: 'ana@example.com', team: '=HYPERLINK("http://x","y")', link: 'https://cp.example/checkin/o/org_a#t1' },
      { email: 'bo@example.com', team: null, link: 'https://cp.example/checkin/o/org_a#t2' },
      { email: 'cy@example.com', team: 'Ops, "night"', link: 'https://cp.example/checkin/o/org_a#t3' },
      { email: 'di@example.com', team: '@SUM(A1)', link: 'https://cp.example/checkin/o/org_a#t4' },
    ];
    expect(linksCsv(links)).toBe(
      'email,team,link\r\n' +
        'ana@example.com,"\'=HYPERLINK(""http://x"",""y"")",https://cp.example/checkin/o/org_a#t1\r\n' +
        'bo@example.com,,https://cp.example/checkin/o/org_a#t2\r\n' +
        'cy@example.com,"Ops, ""night""",https://cp.example/checkin/o/org_a#t3\r\n' +
        'di@example.com,"\'@SUM(A1)",https://cp.example/checkin/o/org_a#t4\r\n',
    );
    expect(linksCsv(links.slice(1, 2), '\n')).toBe('email,team,link\nbo@example.com,,https://cp.example/checkin/o/org_a#t2\n');
  });
});
