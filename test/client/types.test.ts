import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

it('the client types in packages/client/src/schema.ts are generated from docs/openapi.json (npm run client:types)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-client-types-'));
  try {
    const out = join(dir, 'schema.ts');
    execFileSync(process.execPath, [join(root, 'node_modules/openapi-typescript/bin/cli.js'), 'docs/openapi.json', '-o', out], {
      cwd: root,
      stdio: 'pipe',
    });
    const fresh = readFileSync(out, 'utf8');
    const committed = readFileSync(join(root, 'packages/client/src/schema.ts'), 'utf8');
    expect(committed === fresh, 'packages/client/src/schema.ts is stale: run `npm run client:types` and commit it').toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
