import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/** Titles a test file can produce: its string literals, with it.each placeholders as wildcards. */
function titlePatterns(source: string): RegExp[] {
  const literals = source.match(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g) ?? [];
  return literals.map((lit) => {
    const text = lit.slice(1, -1).replace(/\\(.)/g, '$1');
    const parts = text.split(/%[sidfjo]|\$\{[^}]*\}/);
    return new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+')}$`);
  });
}

describe('docs/security.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
  const citations = [...doc.matchAll(/`(test\/[^`]+\.test\.ts)` › "([^"]+)"/g)].map((m) => ({ file: m[1], title: m[2] }));

  it('names tests that exist: every cited file is there and contains the cited test title', () => {
    expect(citations.length).toBeGreaterThan(30);
    for (const { file, title } of citations) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      const last = title.split(' › ').at(-1)!;
      const patterns = titlePatterns(readFileSync(join(ROOT, file), 'utf8'));
      const matches = last.endsWith('…')
        ? patterns.some(
            (p) =>
              p.test(last.slice(0, -1).trim()) ||
              p.source.startsWith(
                `^${last
                  .slice(0, -1)
                  .trim()
                  .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
              ),
          )
        : patterns.some((p) => p.test(last));
      expect(matches, `${file} › "${last}"`).toBe(true);
    }
  });
});

/** What each production dependency is for. A new dependency without a role here fails the test below. */
const ROLES: Record<string, string> = {
  '@cloudflare/blindrsa-ts': 'check-in page: blinds and finishes RFC 9474 tokens in the browser (bundled; the server signs with OpenSSL)',
  '@electric-sql/pglite': 'embedded database (PostgreSQL compiled to WASM)',
  '@fastify/fast-json-stringify-compiler': "Fastify's own response serializer, compiled per route on first use in the CLI",
  '@fastify/rate-limit': 'per-key rate limits (its stores count failed authentications too)',
  '@fastify/swagger': 'OpenAPI document',
  '@fastify/swagger-ui': 'API reference page',
  '@fastify/type-provider-typebox': 'TypeBox types for routes',
  ajv: 'request validation',
  'ajv-formats': 'date-time and date formats',
  'cli-progress': 'CLI only: import progress bar',
  commander: 'CLI only: commands and options',
  'csv-parse': 'CLI only: CSV import',
  fastify: 'HTTP server',
  ioredis: 'Redis (shared rate-limit counters)',
  nodemailer: 'console: invitations sent by email through SMTP_URL (the address proven by its mailbox)',
  qrcode: 'console: the two-factor enrollment QR code (a PNG data: URL made on the server, no CDN)',
  otpauth: 'console: two-factor codes (TOTP, RFC 6238)',
  uplot: 'console: the overview charts (drawn from their tables; served from the package, no CDN)',
  pg: 'PostgreSQL driver',
  'pg-copy-streams': "PostgreSQL's COPY FROM STDIN (the file import's batches)",
  pino: 'logs',
  'prom-client': 'metrics',
  standardwebhooks: 'webhook signatures',
  typebox: 'schemas',
  '@fastify/otel': 'traces: a span per request and its hooks (loaded only when traces are on)',
  '@opentelemetry/api': 'traces: the tracing API the spans are made through',
  '@opentelemetry/api-logs': 'traces: pinned for the SDK (its logs provider is disabled at shutdown)',
  '@opentelemetry/exporter-trace-otlp-http': 'traces: OTLP over HTTP, JSON',
  '@opentelemetry/exporter-trace-otlp-proto': 'traces: OTLP over HTTP, protobuf',
  '@opentelemetry/resources': "traces: the service's name and version",
  '@opentelemetry/sdk-node': 'traces: the SDK, started only when OTEL_EXPORTER_OTLP_ENDPOINT (or its like) is set',
  '@opentelemetry/sdk-trace': 'traces: the span processor that keeps only allowed attributes',
  'openid-client': "console: single sign-on by OpenID Connect (discovery, code with PKCE, the ID token checked by the IdP's keys)",
  '@node-saml/node-saml': 'console: single sign-on by SAML 2.0 (signed assertions, their audience, recipient and time checked)',
  '@simplewebauthn/server': 'console: passkeys (WebAuthn registration and sign-in checked on the server)',
  '@simplewebauthn/browser': "console: passkeys in the browser (bundled into the console's script at build time)",
  'scim2-parse-filter': "SCIM: the filter grammar of identity providers' queries",
  'scim-patch': "SCIM: PATCH operations' semantics",
  jose: "console: verifies OpenID Connect back-channel logout tokens against the IdP's published keys",
  'intl-messageformat': 'every page and mail: ICU MessageFormat catalogues, one per locale (bundled into the check-in script)',
};

/** The dependency table of docs/security.md, made from package.json: it cannot drift from what is installed. */
export function dependencyTable(): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const rows = Object.entries(pkg.dependencies)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, range]) => `| ${name} | ${range} | ${ROLES[name] ?? 'ROLE MISSING: add it to test/security/docs.test.ts'} |`);
  return ['| package | version (package.json) | role |', '|---|---|---|', ...rows].join('\n');
}

describe('docs/security.md dependency table', () => {
  it('is the table generated from package.json, every production dependency with its role', () => {
    const doc = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
    const m = /<!-- dependencies:begin -->\n([\s\S]*?)\n<!-- dependencies:end -->/.exec(doc);
    expect(m, 'the markers around the table').not.toBeNull();
    expect(dependencyTable()).not.toContain('ROLE MISSING');
    expect(m![1]).toBe(dependencyTable());
  });
});
