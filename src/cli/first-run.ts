import cluster from 'node:cluster';
import type { DatabaseExecutor } from '../domain/database.js';
import { listOrganizations } from '../domain/orgs.js';

/**
 * What a server prints at start when it made no demo, so that whoever started it is never left
 * without a way in (issue 42): the organizations the database holds and the commands that make a
 * key or a console invitation (they work while the server runs: through its operator socket on
 * the embedded database, beside it on PostgreSQL). Printed on PostgreSQL too, with or without
 * `--demo-if-empty`, and once per start: by a single process, or by the first worker of `WORKERS`.
 * The commands name the demo organization when there is one (a restart after the README's
 * operator section holds others, listed first as the newest), else the newest one.
 */
export async function printWayIn(db: DatabaseExecutor, base: string, log: (text: string) => void = (t) => console.log(t)): Promise<void> {
  if (cluster.isWorker && cluster.worker?.id !== 1) return;
  log(await wayIn(db, base));
}

export async function wayIn(db: DatabaseExecutor, base: string): Promise<string> {
  const { items, nextCursor } = await listOrganizations(db, { limit: 10 });
  const live = items.filter((o) => o.deletedAt === null);
  const example = (live.find((o) => o.id.startsWith('org_demo_')) ?? live[0])?.id ?? 'ORG_ID';
  return [
    `Organizations: ${live.length === 0 ? 'none live' : live.map((o) => `${o.id} (${o.name})`).join(', ')}${nextCursor ? ', and more (npx climate-pulse orgs list)' : ''}.`,
    `  a new API key:           npx climate-pulse keys create --org ${example}`,
    `  a console invitation:    npx climate-pulse members invite --org ${example} --email you@example.com --role owner`,
    `  the console:             ${base}/console`,
  ].join('\n');
}
