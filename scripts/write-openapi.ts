// Writes docs/openapi.json and docs/openapi-admin.json (the operator API's) from the code:
// `npm run openapi`. A test fails when either drifts.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildAdminApp } from '../src/admin/app.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { PgliteExecutor } from '../src/db/pglite.js';

export async function generateOpenApi(): Promise<string> {
  const db = await PgliteExecutor.open();
  await migrate(db);
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', COMMENT_CURSOR_SECRET: 'x'.repeat(32) }), { db });
  const doc = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await db.close();
  return doc;
}

export async function generateAdminOpenApi(): Promise<string> {
  const db = await PgliteExecutor.open();
  const app = await buildAdminApp(loadConfig({ LOG_LEVEL: 'silent' }), { db });
  const doc = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await db.close();
  return doc;
}

export const OPENAPI_PATH = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
export const ADMIN_OPENAPI_PATH = fileURLToPath(new URL('../docs/openapi-admin.json', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(OPENAPI_PATH, await generateOpenApi());
  writeFileSync(ADMIN_OPENAPI_PATH, await generateAdminOpenApi());
  console.log(`wrote ${OPENAPI_PATH} and ${ADMIN_OPENAPI_PATH}`);
}
