import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/executor.js';
import { loadDataset } from '../../src/domain/dataset.js';
import { deleteOrganization } from '../../src/domain/orgs.js';
import { TeamNames } from '../../src/domain/pulses.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { operatorActor } from '../../src/domain/audit.js';

/**
 * The team names of GET /pulses are kept per process (TeamNames): a team created later is named on
 * the first page that shows it, and after the cache's bound no name of an erased organization is
 * served to a new organization with the same id.
 */
describe('team names of pulse pages', () => {
  let t: TestDatabase;
  const team = (id: string, name: string) => ({ id, name, createdAt: '2026-01-01T00:00:00.000Z' });
  const org = (id: string, teams: ReturnType<typeof team>[]) => ({ id, name: id, plan: 'business', createdAt: '2026-01-01T00:00:00.000Z', teams });
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDataset(t.db, { organizations: [org('org_names', [team('team_a', 'Alpha')]), org('org_twin', [team('team_a', 'Twin alpha')])] });
  });
  afterAll(() => t.close());

  it('names the teams of each organization, a team created later, and no id of another organization', async () => {
    const names = new TeamNames(5_000);
    const at = 1_000_000;
    expect([...(await names.of(t.db, 'org_names', ['team_a', 'team_b'], at))]).toEqual([['team_a', 'Alpha']]);
    expect([...(await names.of(t.db, 'org_twin', ['team_a'], at))]).toEqual([['team_a', 'Twin alpha']]);
    await t.db.query(sql('test.names.team', `INSERT INTO teams (org_id, id, name, created_at) VALUES ('org_names', 'team_b', 'Beta', now())`));
    expect((await names.of(t.db, 'org_names', ['team_b'], at + 1)).get('team_b')).toBe('Beta');
    expect((await names.of(t.db, 'org_names', ['team_a'], at + 2)).get('team_a')).toBe('Alpha');
  });

  it('serves no name of an erased organization once the bound has passed', async () => {
    const names = new TeamNames(5_000);
    const at = 2_000_000;
    expect((await names.of(t.db, 'org_names', ['team_a'], at)).get('team_a')).toBe('Alpha');
    await deleteOrganization(t.db, 'org_names', { erase: true }, operatorActor(), new Date());
    await loadDataset(t.db, { organizations: [org('org_names', [team('team_a', 'Reborn')])] });
    expect((await names.of(t.db, 'org_names', ['team_a'], at + 5_000)).get('team_a')).toBe('Reborn');
  });

  it('keeps nothing with a bound of 0', async () => {
    const names = new TeamNames(0);
    expect((await names.of(t.db, 'org_twin', ['team_a'], 1)).get('team_a')).toBe('Twin alpha');
    await t.db.query(sql('test.names.rename', `UPDATE teams SET name = 'Renamed' WHERE org_id = 'org_twin' AND id = 'team_a'`));
    expect((await names.of(t.db, 'org_twin', ['team_a'], 1)).get('team_a')).toBe('Renamed');
  });
});
