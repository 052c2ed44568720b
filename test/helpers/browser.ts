import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { DatabaseExecutor } from '../../src/db/executor.js';
import { operatorActor } from '../../src/domain/audit.js';
import { inviteMember, type MemberRole } from '../../src/domain/members.js';

/**
 * The plumbing of the console's browser tests (headless Chromium through playwright-core):
 *
 * - `launchConsoleBrowser()` starts Chromium and returns a `ConsoleBrowser`;
 * - `cb.context()` is a browser context whose requests may reach 127.0.0.1 only (any other is
 *   aborted and recorded in `cb.leaving`), that records Content-Security-Policy violations, and
 *   that accepts every dialog (its message recorded in `cb.dialogs`: an `alert(1)` of hostile
 *   text would show there);
 * - `cb.audit(page, what)` runs axe-core on the page once loaded (WCAG 2.x A and AA: no serious or
 *   critical violation, else the test fails) and moves the page's CSP violations so far into
 *   `cb.violations`;
 * - `joinConsole(cb, base, db, orgId, email, role)` invites a member through the domain (as the
 *   operator) and accepts the invitation in a fresh context: its page is on /console/overview;
 * - `acceptInvitation(page, link)` and `signIn(page, base, email)` do the same steps on a page.
 *
 * A test ends with `expect(cb.violations).toEqual([])`, `expect(cb.leaving).toEqual([])` and
 * `await cb.close()`. Skip the file with `describe.skipIf(BROWSER_MISSING)`: off CI, a machine
 * without Chromium skips it; on CI a missing Chromium fails.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const BROWSER_MISSING = !existsSync(CHROMIUM) && !process.env.CI;
/** Text that would run script if a page forgot to escape it. */
export const HOSTILE = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`;
/** The password every member made by these helpers chooses. */
export const PASSWORD = 'a long enough passphrase';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where a browser test writes its screenshot `name` (`console.png`): into docs/, the pictures the
 * documentation shows, only when SCREENSHOTS is set (`npm run screenshots`); otherwise into
 * .test-tmp/screenshots/ (ignored by git), so that `npm test` leaves the checkout as it found it
 * (issue 42). The screenshot is taken either way: the test still proves the page renders.
 */
export function screenshotPath(name: string): string {
  if (process.env.SCREENSHOTS) return join(ROOT, 'docs', name);
  const dir = join(ROOT, '.test-tmp', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

export interface ConsoleBrowser {
  browser: Browser;
  /** Requests to another host than 127.0.0.1, aborted. */
  leaving: string[];
  /** CSP violations collected by `audit`, each prefixed by the page's `what`. */
  violations: string[];
  /** Messages of the dialogs pages opened (each accepted). */
  dialogs: string[];
  context(): Promise<BrowserContext>;
  audit(page: Page, what: string): Promise<void>;
  close(): Promise<void>;
}

export async function launchConsoleBrowser(): Promise<ConsoleBrowser> {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing (.ci/run installs it)`).toBe(true);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const cb: ConsoleBrowser = {
    browser,
    leaving: [],
    violations: [],
    dialogs: [],
    async context() {
      const c = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await c.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.hostname === '127.0.0.1') return route.continue();
        cb.leaving.push(url.href);
        return route.abort();
      });
      await c.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e) => {
          (window as unknown as { __csp: string[] }).__csp ??= [];
          (window as unknown as { __csp: string[] }).__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
        });
      });
      c.on('page', (p) =>
        p.on('dialog', (d) => {
          cb.dialogs.push(d.message());
          return d.accept();
        }),
      );
      return c;
    },
    async audit(page, what) {
      // A click that navigates returns once the new page starts loading: measure it once it has
      // loaded, with its stylesheet (unstyled, the navigation's links are small targets stacked).
      await page.waitForLoadState('load');
      await page.evaluate(AXE);
      const result = (await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`)) as {
        violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
      };
      const bad = result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      expect(bad, `${what}: axe`).toEqual([]);
      const csp = (await page.evaluate('window.__csp ?? []')) as string[];
      await page.evaluate('window.__csp = []');
      cb.violations.push(...csp.map((v) => `${what}: ${v}`));
    },
    async close() {
      await Promise.race([browser.close(), new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
    },
  };
  return cb;
}

/** Opens an invitation link, chooses `password` and accepts: the page ends on /console/overview. */
export async function acceptInvitation(page: Page, link: string, password = PASSWORD) {
  await page.goto(link);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: /accept invitation/i }).click();
  await page.waitForURL(/\/console\/overview$/);
}

/** Signs in with email and password (a member without two-factor): the page ends on /console/overview. */
export async function signIn(page: Page, base: string, email: string, password = PASSWORD) {
  await page.goto(`${base}/console/sign-in`);
  await page.getByLabel(/^email$/i).fill(email);
  await page.getByLabel(/^password$/i).fill(password);
  await page.getByRole('button', { name: /^sign in$/i }).click();
  await page.waitForURL(`${base}/console/overview`);
}

/** A new member of `orgId`, invited by the operator, signed in in a context of its own. */
export async function joinConsole(
  cb: ConsoleBrowser,
  base: string,
  db: DatabaseExecutor,
  orgId: string,
  member: { email: string; role: MemberRole },
): Promise<{ context: BrowserContext; page: Page }> {
  const invitation = await inviteMember(db, orgId, member, operatorActor('192.0.2.200'), new Date());
  const context = await cb.context();
  const page = await context.newPage();
  await acceptInvitation(page, `${base}/console/invitations/${invitation.token}`);
  return { context, page };
}
