import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { EnvSchema, loadConfig } from '../../src/config.js';
import { runCli } from '../helpers/cli.js';
import { ROOT } from '../helpers/process.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const page = read('docs/deployment.md');
const unitText = read('docs/deploy/climate-pulse.service');
const manifestText = read('docs/deploy/kubernetes.yaml');
/** What the primary of WORKERS adds to the grace before it kills workers that hang (src/cluster.ts). */
const PRIMARY_MARGIN_MS = 5_000;
/** A DATABASE_URL for checking the files' settings (theirs comes from a secret). */
const SOME_DATABASE = { DATABASE_URL: 'postgres://climate:secret@db.internal:5432/climate' };

/** `[Section] key=value` lines; a key given several times keeps each value. */
function parseUnit(text: string) {
  const sections: Record<string, Record<string, string[]>> = {};
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = section[1];
      sections[current] ??= {};
      continue;
    }
    const eq = line.indexOf('=');
    expect(eq, `not a key=value line: ${line}`).toBeGreaterThan(0);
    (sections[current][line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return sections;
}

describe('docs/deployment.md and the files it shows', () => {
  it('shows docs/deploy/climate-pulse.service and docs/deploy/kubernetes.yaml exactly as they are', () => {
    expect(page).toContain('```ini\n' + unitText + '```');
    expect(page).toContain('```yaml\n' + manifestText + '```');
  });

  it('the systemd unit: ExecReload sends SIGHUP to the primary, stop is SIGTERM to it, TimeoutStopSec outlasts the grace, and its environment is valid', () => {
    const unit = parseUnit(unitText);
    const service = unit.Service;
    expect(service.ExecReload).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(service.KillSignal).toEqual(['SIGTERM']);
    expect(service.KillMode).toEqual(['mixed']);
    expect(service.ExecStart).toHaveLength(1);
    expect(service.ExecStart[0]).toMatch(/ serve$/);
    const env = Object.fromEntries(service.Environment.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    for (const name of Object.keys(env)) expect(Object.keys(EnvSchema.properties)).toContain(name);
    const config = loadConfig({ ...env, ...SOME_DATABASE });
    expect(config.workers).toBeGreaterThan(1); // SIGHUP rolls them
    expect(Number(service.TimeoutStopSec[0]) * 1000).toBeGreaterThan(config.shutdownGraceMs + PRIMARY_MARGIN_MS);
    expect(unit.Install.WantedBy).toEqual(['multi-user.target']);
  });

  it('the Kubernetes manifest: probes on /readyz and /healthz, a drain delay longer than the readiness probe takes to fail, a termination grace longer than SHUTDOWN_GRACE_MS', () => {
    const docs = parseAllDocuments(manifestText).map((d) => d.toJS());
    const deployment = docs.find((d) => d.kind === 'Deployment');
    expect(docs.find((d) => d.kind === 'Service')?.spec.ports[0].targetPort).toBe('http');
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    const env = Object.fromEntries(container.env.filter((e: { value?: string }) => e.value !== undefined).map((e: { name: string; value: string }) => [e.name, e.value]));
    for (const e of container.env) expect(Object.keys(EnvSchema.properties)).toContain(e.name);
    const config = loadConfig({ ...env, ...SOME_DATABASE });
    expect(container.ports).toEqual([{ name: 'http', containerPort: config.port }]);
    expect(config.host).toBe('0.0.0.0');
    expect(config.workers).toBe(1);

    const { readinessProbe: ready, livenessProbe: live, startupProbe: startup } = container;
    expect(ready.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(live.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(startup.httpGet).toEqual({ path: '/healthz', port: 'http' });
    // The load balancer has seen /readyz fail, with a second for the endpoints to follow, before the port closes.
    expect(config.shutdownDelayMs).toBeGreaterThanOrEqual(ready.periodSeconds * ready.failureThreshold * 1000 + 1000);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdownGraceMs);
  });

  it('names the signals in the page, the README, `climate-pulse --help` and `climate-pulse serve --help`', async () => {
    const [root, serve] = await Promise.all([runCli(['--help'], {}), runCli(['serve', '--help'], {})]);
    expect(root.code).toBe(0);
    expect(root.stdout).toContain('Signals to `serve`: SIGTERM or SIGINT drain and exit 0; SIGHUP replaces the WORKERS one at a time.');
    expect(serve.code).toBe(0);
    for (const words of ['SIGTERM, SIGINT  drain and exit 0', 'SIGHUP           with WORKERS of 2 or more', 'SHUTDOWN_DELAY_MS', 'SHUTDOWN_GRACE_MS', 'docs/deployment.md']) {
      expect(serve.stdout).toContain(words);
    }
    for (const words of ['| `SIGTERM`, `SIGINT` |', '| `SIGHUP` | the primary of `WORKERS`', '| `SIGHUP` | a single process']) expect(page).toContain(words);
    const readme = read('README.md');
    for (const words of ['SIGTERM', 'SIGHUP', '`SHUTDOWN_GRACE_MS` | 10000', '`SHUTDOWN_DELAY_MS` | 0', 'docs/deployment.md']) expect(readme).toContain(words);
  });
});
