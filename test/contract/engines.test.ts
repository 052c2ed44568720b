import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Issue 29: `npm install` on Node 20 warned EBADENGINE (two packages declared Node >= 22). Every
 * installed package, and the project itself, must accept the oldest Node the project supports
 * (package.json `engines`), and the current LTS lines users run.
 */
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; version?: string }>;
};
const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };

describe('Node versions', () => {
  const oldest = semver.minVersion(own.engines.node)!.version;

  it('the project supports Node 20.19 and the LTS lines 22 and 24', () => {
    expect(oldest).toBe('20.19.0');
    for (const v of ['20.19.0', '22.0.0', '24.0.0']) expect(semver.satisfies(v, own.engines.node), v).toBe(true);
  });

  it('no installed package declares an engine that excludes the oldest supported Node (no EBADENGINE warning)', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const range = !Array.isArray(p.engines) ? p.engines?.node : undefined;
        return range && !semver.satisfies(oldest, range) ? [`${path}@${p.version}: node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
