import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/**
 * The floors of docs/architecture.md, checked on every import of every file under src/ (static,
 * type-only and dynamic): faces (public, admin, console, checkin, cli, jobs) over the base (http)
 * -> domain -> db, all of them -> contract. A route file calls the domain, never a repository; the
 * domain never knows a face or Fastify; no face imports another.
 */
const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports: src-relative paths for its own modules, package names otherwise. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]);
  return specs.map((s) => (s.startsWith('.') ? relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '.ts') : s));
}

const all = files(SRC).map((f) => ({ file: relative(SRC, f), imports: importsOf(f) }));
const under = (prefix: string) => all.filter((f) => f.file.startsWith(prefix));
/** The faces that speak HTTP, side by side over the base (src/http/); checkin is the next one (issue 44). */
const FACES = ['public', 'admin', 'console', 'checkin', 'scim'] as const;
const FACE_OR_BASE = /^(http|public|admin|console|checkin|scim|cli|jobs)\//;
const offenders = (from: { file: string; imports: string[] }[], bad: (spec: string) => boolean) =>
  from.flatMap(({ file, imports }) => imports.filter(bad).map((spec) => `${file} imports ${spec}`));

describe('layers', () => {
  it('reads the imports it checks (a rule that sees no import could not fail)', () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all.find((f) => f.file === 'public/routes/org/getOrg.ts')?.imports).toContain('domain/orgs.ts');
  });

  it('no route file (public, operator, console or check-in) imports anything under src/db/', () => {
    expect(under('public/routes/').length).toBeGreaterThan(5);
    expect(
      offenders([...under('public/routes/'), ...under('admin/routes/'), ...under('console/'), ...under('checkin/'), ...under('scim/')], (s) =>
        s.startsWith('db/'),
      ),
    ).toEqual([]);
  });

  it('no domain module imports Fastify, the base or a face (http, public, admin, console, checkin, cli, jobs)', () => {
    expect(offenders(under('domain/'), (s) => s === 'fastify' || s.startsWith('@fastify/') || FACE_OR_BASE.test(s))).toEqual([]);
  });

  it('the database layer imports neither the domain nor a face', () => {
    expect(offenders(under('db/'), (s) => s.startsWith('domain/') || FACE_OR_BASE.test(s) || s === 'fastify')).toEqual([]);
  });

  it('the contract imports nothing of the service', () => {
    expect(offenders(under('contract/'), (s) => /^(domain|db)\//.test(s) || FACE_OR_BASE.test(s))).toEqual([]);
  });

  it('no face imports another face (public, operator, console, check-in): what they share is in the base or the domain', () => {
    expect(under('console/').length).toBeGreaterThan(5);
    const other = (face: string) => (s: string) => FACES.some((f) => f !== face && s.startsWith(`${f}/`));
    expect(FACES.flatMap((face) => offenders(under(`${face}/`), other(face)))).toEqual([]);
  });

  it("no job imports a face: what a job shares with one (a link's address, a mail) is in the configuration or the domain", () => {
    expect(under('jobs/').length).toBeGreaterThan(2);
    expect(offenders(under('jobs/'), (s) => /^(public|admin|console|checkin|cli|scim)\//.test(s))).toEqual([]);
  });

  it('the check-in face validates by schema: every route that takes a body declares one, and no face words a body check by hand', () => {
    const checkin = under('checkin/').filter(({ file }) => !file.startsWith('checkin/client/'));
    const posts = checkin.flatMap(({ file }) =>
      readFileSync(join(SRC, file), 'utf8')
        .split(/\.(?=(?:post|put|patch)\b)/)
        .slice(1)
        .map((route) => ({ file, head: route.slice(0, route.indexOf('async (')) })),
    );
    expect(posts.length).toBeGreaterThanOrEqual(3);
    expect(posts.filter((p) => !/\bbody: \w+Schema\b/.test(p.head)).map((p) => `${p.file}: ${p.head.slice(0, 60)}`)).toEqual([]);
    // The words of a refused body are the base's (describeValidation, requireJsonObject) or a schema's in the contract.
    const worded = all
      .filter(({ file }) => /Unknown body field|must be a JSON object/.test(readFileSync(join(SRC, file), 'utf8')))
      .map((f) => f.file)
      .sort();
    expect(worded).toEqual(['contract/schemas/checkin.ts', 'http/plugins/body-rules.ts', 'http/plugins/errors.ts']);
  });

  it('the base (src/http/) holds no routes and imports no face', () => {
    expect(offenders(under('http/'), (s) => FACES.some((f) => s.startsWith(`${f}/`)))).toEqual([]);
    const routes = under('http/').filter(({ file }) => /\b(app|scope)\.(get|post|put|patch|delete|route)\(/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(routes.map((f) => f.file)).toEqual(['http/openapi.ts']); // the one OpenAPI builder serves each face's document
  });
});

/**
 * The import cycles among `files` (each as a path of src-relative modules that ends where it
 * starts), counting every import, type-only ones too: a cycle is a knot in the layout even when
 * the compiler erases it (issue 54, item 8).
 */
function importCycles(files: { file: string; imports: string[] }[]): string[] {
  const edges = new Map(files.map(({ file, imports }) => [file, imports.filter((s) => s !== file && files.some((f) => f.file === s))]));
  const cycles = new Set<string>();
  const walk = (path: string[]) => {
    for (const next of edges.get(path[path.length - 1]) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        // One name per cycle, whichever module it was entered by: rotated to start at its least.
        const ring = path.slice(at);
        const start = ring.indexOf([...ring].sort()[0]);
        cycles.add([...ring.slice(start), ...ring.slice(0, start), ring[start]].join(' -> '));
      } else if (!seen.has(next)) walk([...path, next]);
    }
    seen.add(path[path.length - 1]);
  };
  const seen = new Set<string>();
  for (const { file } of files) if (!seen.has(file)) walk([file]);
  return [...cycles].sort();
}

describe('no import cycles below the faces (issue 54, item 8)', () => {
  it('finds a cycle when there is one (a rule that sees none could not fail)', () => {
    const knot = [
      { file: 'domain/a.ts', imports: ['domain/b.ts', 'db/x.ts'] },
      { file: 'domain/b.ts', imports: ['domain/c.ts'] },
      { file: 'domain/c.ts', imports: ['domain/a.ts'] },
      { file: 'domain/d.ts', imports: ['domain/a.ts'] },
    ];
    expect(importCycles(knot)).toEqual(['domain/a.ts -> domain/b.ts -> domain/c.ts -> domain/a.ts']);
    expect(importCycles(knot.slice(0, 2))).toEqual([]);
  });

  it('no two domain modules import each other, directly or through others (type-only imports count)', () => {
    expect(under('domain/').length).toBeGreaterThan(20);
    expect(importCycles(under('domain/'))).toEqual([]);
  });

  it('nor do the modules of the database layer or of the contract', () => {
    expect(importCycles(under('db/'))).toEqual([]);
    expect(importCycles(under('contract/'))).toEqual([]);
  });
});

describe('one base for every face', () => {
  const text = (file: string) => readFileSync(join(SRC, file), 'utf8');
  const apps = ['app.ts', 'admin/app.ts'];

  it('the public and operator apps build on the base list, repeating no hook, handler or regex', () => {
    for (const app of apps) {
      const t = text(app);
      expect(t, app).toMatch(/registerBase\(app, \{/);
      expect(t, `${app} registers its own error handler`).not.toMatch(/setErrorHandler|setNotFoundHandler|setValidatorCompiler|removeContentTypeParser/);
      expect(t, `${app} writes its own request log`).not.toMatch(/addHook\(\s*'onResponse'/);
      expect(t, `${app} sets the common headers itself`).not.toMatch(/x-content-type-options|'x-request-id'/);
      expect(t, `${app} casts a scope`).not.toContain('as never');
      expect(
        offenders(
          all.filter((f) => f.file === app),
          (s) => s.startsWith('http/plugins/') && s !== 'http/plugins/index.ts',
        ),
        app,
      ).toEqual([]);
    }
  });

  it('the console is a scope under the same base: registered after it, adding no common header, log line or body rule of its own', () => {
    const app = text('app.ts');
    expect(app.indexOf('registerBase(app')).toBeGreaterThan(0);
    expect(app.indexOf('registerConsole(app')).toBeGreaterThan(app.indexOf('registerBase(app'));
    for (const { file } of under('console/')) {
      const t = text(file);
      expect(t, `${file} sets the common headers itself`).not.toMatch(/x-content-type-options|'x-request-id'/);
      expect(t, `${file} writes its own request log`).not.toMatch(/addHook\(\s*'onResponse'/);
      expect(t, `${file} changes the body rules`).not.toMatch(/setValidatorCompiler|removeContentTypeParser/);
    }
    expect(offenders(under('console/'), (s) => s.startsWith('http/plugins/') && s !== 'http/plugins/index.ts')).toEqual([]);
  });

  it('each app is a list of named plugins: the base and the faces register plugins, not hooks, for what they share', () => {
    expect(text('http/plugins/index.ts')).toMatch(/contractErrors[\s\S]*bodyRules[\s\S]*responseHeaders[\s\S]*drain[\s\S]*requestLog[\s\S]*bearerReading/);
    expect(text('admin/app.ts')).toContain('app.register(operatorToken');
    expect(text('admin/app.ts'), 'the operator token check lives in its own plugin').not.toMatch(/addHook\(\s*'onRequest'/);
  });

  it('one OpenAPI builder serves both documents', () => {
    const builders = all.filter(({ file }) => /@fastify\/swagger'/.test(text(file))).map((f) => f.file);
    expect(builders).toEqual(['http/openapi.ts']);
    expect(text('admin/app.ts')).toContain('openApiDocument');
    expect(text('public/openapi.ts')).toContain('openApiDocument');
  });

  it('caching is registered per face: no plugin tells a face by its URL', () => {
    expect(text('public/plugins/caching.ts')).not.toMatch(/\/console|CONSOLE/);
  });

  it('the bearer header is parsed in one place', () => {
    const parsers = all.filter(({ file }) => /\^bearer/i.test(text(file))).map((f) => f.file);
    expect(parsers).toEqual(['http/plugins/bearer.ts']);
  });
});

describe('one error story', () => {
  const text = (file: string) => readFileSync(join(SRC, file), 'utf8');

  it('the domain throws one error type: no error class of its own but ApiError and its subclasses', () => {
    const own = under('domain/').flatMap(({ file }) =>
      [...text(file).matchAll(/class (\w+) extends (\w+)/g)]
        .filter((m) => /Error$/.test(m[2]) && m[2] !== 'ApiError')
        .map((m) => `${file}: ${m[1]} extends ${m[2]}`),
    );
    expect(own).toEqual([]);
    // And it does throw them (a rule that sees nothing could not fail).
    expect(under('domain/').filter(({ file }) => /new ApiError\(|\binvalid\(|\bnotFound\(/.test(text(file))).length).toBeGreaterThan(5);
  });

  it('nothing outside src/db/ names a SQLSTATE or reads a driver error', () => {
    const named = all
      .filter(({ file }) => !file.startsWith('db/'))
      .flatMap(({ file }) =>
        [...text(file).matchAll(/['"]((?:0[8A]|2[2-5]|40|42|53|54|55|57|58|XX)[0-9A-Z]{3})['"]|\.(?:sqlState|routine|constraint)\b/g)].map(
          (m) => `${file}: ${m[0]}`,
        ),
      );
    expect(named).toEqual([]);
  });

  it('the CLI has one print path for errors', () => {
    // The entry runs the program and hands any failure to printCliError (src/cli/program.ts), also
    // used by the tests that run the CLI in their own process.
    expect(text('cli/index.ts')).toMatch(/catch \(err\) \{\s*printCliError\(err\);\s*process\.exitCode = 1;/);
    const program = text('cli/program.ts');
    const printer = program.slice(program.indexOf('export function printCliError'));
    expect(printer.match(/\bprint\(/g)).toHaveLength(2); // the expected one-liner, and a bug shown whole
    expect(printer).toContain('err instanceof PlainError');
    expect([...program.matchAll(/instanceof (\w+)/g)].map((m) => m[1])).toEqual(['PlainError']);
  });
});

describe('every change is audited (src/domain/audit.ts)', () => {
  const text = (file: string) => readFileSync(join(SRC, file), 'utf8');
  /** A verb of a change, at the start of an exported function's name. */
  const CHANGE =
    /^(create|update|change|edit|delete|revoke|moderate|ingest|import|add|remove|mark|set|enable|disable|rotate|resend|replay|ping|invite|accept|roll|enroll|sign)[A-Z]/;
  /** Exported domain functions named like a change that are not an operation on an organization's data, and why. */
  const NOT_OPERATIONS: Record<string, string> = {
    'domain/keys.ts createApiKey': 'a building block of createOrgKey (audited) and of the dataset loader (not audited, docs/decisions.md)',
    'domain/webhook-deliveries.ts createEndpoint': 'a building block of createWebhookEndpoint (audited)',
    'domain/demo.ts createDemo': 'the demo organization, loaded like a dataset file (not audited)',
    'domain/plans.ts updatePlan': "plans are service-wide, not an organization's data",
    'domain/sessions.ts acceptInvitation': 'its actor is the person it makes a member (memberActor); it writes member.joined itself',
    'domain/sessions.ts signIn': 'its actor is the member the email names, known only inside; it writes member.signed_in or member.sign_in_failed itself',
    'domain/checkins/roster.ts createRespondent': 'addRespondentIn in its own transaction: that writes respondent.added (SCIM shares it)',
    'domain/checkins/roster.ts deleteRespondent': 'removeRespondentIn in its own transaction: that writes respondent.removed (SCIM shares it)',
    'domain/members.ts updateMemberRole': "setMemberRoleAndTeams (audited) keeping a manager's teams",
    'domain/members.ts setMemberLanguage':
      "a member's own choice of the language their pages are written in: it changes nothing of the organization, what it reads or who may act (docs/decisions.md)",
    'domain/sessions.ts signInOrChoose':
      'signIn with the choice of organization: its actor is the member the email and password name, known only inside; it writes member.signed_in itself',
    'domain/passkeys.ts signInWithPasskey':
      'its actor is the member the passkey names, known only inside; it writes member.signed_in, member.sign_in_failed or member.passkey_refused itself',
  };

  /** Each exported function of the domain: its name, its parameter list and its body. */
  const functions = under('domain/').flatMap(({ file }) => {
    const t = text(file);
    return [...t.matchAll(/export async function (\w+)\(/g)].map((m) => {
      let i = m.index! + m[0].length;
      for (let depth = 1; depth > 0; i++) depth += t[i] === '(' ? 1 : t[i] === ')' ? -1 : 0;
      const end = t.indexOf('\n}\n', i);
      return { id: `${file} ${m[1]}`, name: m[1], params: t.slice(m.index! + m[0].length, i - 1), body: t.slice(i, end) };
    });
  });

  it('every exported domain function that changes something takes a required actor and writes its audit row', () => {
    const changes = functions.filter((f) => CHANGE.test(f.name) && !(f.id in NOT_OPERATIONS));
    expect(changes.length).toBeGreaterThan(15); // a rule that sees no function could not fail
    expect(
      changes.filter((f) => !/\bactor: Actor\b/.test(f.params)).map((f) => f.id),
      'without a required actor: Actor parameter',
    ).toEqual([]);
    // auditRow: the row is written by the change's own statement (createAction's insert carries it).
    expect(
      changes.filter((f) => !/\b(recordAudit|auditRow)\(/.test(f.body)).map((f) => f.id),
      'taking an actor but writing no audit row',
    ).toEqual([]);
  });

  it('the exceptions still exist (a stale exception would hide a new function of that name)', () => {
    expect(Object.keys(NOT_OPERATIONS).filter((id) => !functions.some((f) => f.id === id))).toEqual([]);
  });
});
