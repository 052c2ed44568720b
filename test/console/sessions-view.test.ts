import { describe, expect, it } from 'vitest';
import { sessionsView } from '../../src/console/pages/sessions/view.js';
import { page } from '../../src/console/html.js';
import type { ConsoleSession } from '../../src/domain/sessions.js';

/** The sessions page renders an address as text (TRUST_PROXY may take it from a header) and marks the current session. */
const HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';
const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;';

describe('the sessions view', () => {
  const session = {
    orgId: 'org_v',
    orgName: HOSTILE,
    member: { id: 'mem_v', email: 'v@example.com', role: 'viewer', twoFactor: false, createdAt: '2026-01-01T00:00:00.000Z', lastSignInAt: null },
    stage: 'active',
    csrfToken: 'tok',
    idHash: Buffer.alloc(32),
  } as unknown as ConsoleSession;

  it('escapes the address, marks the current session, and offers the other sessions only when there are some', () => {
    const one = { createdAt: '2026-03-01T10:00:00.000Z', lastSeenAt: '2026-03-01T11:00:00.000Z', stage: 'active' as const };
    const both = page(
      sessionsView({
        session,
        sessions: [
          { ...one, address: HOSTILE, current: true },
          { ...one, address: null, stage: 'totp', current: false },
        ],
      }),
    );
    expect(both).toContain(`<td>${ESCAPED}</td><td>signed in</td><td>this one</td></tr>`);
    expect(both).toContain('<td>unknown</td><td>password given, waiting for the code</td><td></td></tr>');
    expect(both).not.toContain(HOSTILE);
    expect(both).toContain('Ends the other session; you stay signed in here.');
    const alone = page(sessionsView({ session, sessions: [{ ...one, address: '192.0.2.1', current: true }] }));
    expect(alone).toContain('<p>You have no other session.</p>');
    expect(alone).not.toContain('/console/sessions/end-others');
    expect(alone).toContain('action="/console/sessions/end-all"');
  });
});
