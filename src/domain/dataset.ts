import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { sql } from '../db/executor.js';
import { insertActions } from '../db/repositories/actions.js';
import { insertAlerts } from '../db/repositories/alerts.js';
import { PulseWriter } from '../db/pulse-writes.js';
import { uniqueViolation } from '../db/errors.js';
import { FrozenWeekTally } from './comments.js';
import { insertTeams, listTeamIds } from '../db/repositories/teams.js';
import { createApiKey, hashKey } from './keys.js';
import { DATE_TIME_RULE, canonicalDateTime, instantOf } from '../contract/schemas/date-time.js';
import { ORG_ID_PATTERN, ORG_ID_RULE, OrgIdSchema } from '../contract/schemas/common.js';
import { invalid } from '../contract/errors.js';

// Format date-time is the API's one rule (contract/schemas/date-time.ts), registered with TypeBox there.
const DateTime = Type.String({ format: 'date-time' });
const NullableString = (max: number, min = 0) => Type.Union([Type.String({ minLength: min, maxLength: max }), Type.Null()]);
const Id = Type.String({ minLength: 1, maxLength: 128 });

export const DatasetSchema = Type.Object(
  {
    plans: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 64 }),
            restApi: Type.Boolean(),
            rateLimitPerMinute: Type.Integer({ minimum: 1 }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    organizations: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: OrgIdSchema(),
            name: Type.String({ minLength: 1, maxLength: 256 }),
            plan: Type.String({ minLength: 1, maxLength: 64 }),
            memberCount: Type.Optional(Type.Integer({ minimum: 0 })),
            createdAt: DateTime,
            deletedAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
            apiKeys: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    key: Type.String({ minLength: 16, maxLength: 256 }),
                    name: Type.Optional(NullableString(128)),
                    revoked: Type.Optional(Type.Boolean()),
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
            teams: Type.Optional(
              Type.Array(Type.Object({ id: Id, name: Type.String({ minLength: 1, maxLength: 80 }), createdAt: DateTime }, { additionalProperties: false })),
            ),
            pulses: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    id: Id,
                    level: Type.Integer({ minimum: 1, maximum: 5 }),
                    reason: Type.Optional(NullableString(500)),
                    comment: Type.Optional(NullableString(10_000)),
                    moderationStatus: Type.Union([Type.Literal('CLEAN'), Type.Literal('FLAGGED')]),
                    subteamId: Type.Optional(Type.Union([Id, Type.Null()])),
                    createdAt: DateTime,
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
            alerts: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    id: Id,
                    type: Type.String({ minLength: 1, maxLength: 100 }),
                    message: Type.String({ maxLength: 4000 }),
                    weekISO: Type.Optional(NullableString(20)),
                    subteamId: Type.Optional(Type.Union([Id, Type.Null()])),
                    readAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
                    createdAt: DateTime,
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
            actions: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    id: Id,
                    title: Type.String({ minLength: 1, maxLength: 120 }),
                    description: Type.Optional(NullableString(500)),
                    startDate: DateTime,
                    endDate: Type.Optional(Type.Union([DateTime, Type.Null()])),
                    status: Type.Union([Type.Literal('active'), Type.Literal('done'), Type.Literal('cancelled')]),
                    subteamId: Type.Optional(Type.Union([Id, Type.Null()])),
                    createdAt: DateTime,
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

export type Dataset = Static<typeof DatasetSchema>;

export interface LoadSummary {
  plans: number;
  organizations: number;
  apiKeys: number;
  teams: number;
  pulses: number;
  /** Pulses that fell into weeks whose comments were already released: they are never released (docs/privacy.md). */
  pulsesInFrozenWeeks: number;
  alerts: number;
  actions: number;
}

/** `/organizations/0/pulses/17/level` -> `organizations[0].pulses[17].level` */
function dottedPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function schemaAt(schemaPath: string): Record<string, unknown> {
  let node: unknown = DatasetSchema;
  for (const part of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    node = (node as Record<string, unknown> | undefined)?.[part];
  }
  return (node ?? {}) as Record<string, unknown>;
}

function describe(error: { keyword: string; message: string; schemaPath: string; instancePath: string }): string {
  const s = schemaAt(error.schemaPath) as { minimum?: number; maximum?: number; minLength?: number; maxLength?: number; pattern?: string };
  if (s.pattern === ORG_ID_PATTERN) return ORG_ID_RULE;
  if ((error.keyword === 'minimum' || error.keyword === 'maximum') && s.minimum !== undefined && s.maximum !== undefined) {
    return `must be ${s.minimum}-${s.maximum}`;
  }
  if ((error.keyword === 'minLength' || error.keyword === 'maxLength') && s.minLength !== undefined && s.maxLength !== undefined) {
    return `must be ${s.minLength}-${s.maxLength} characters`;
  }
  if (error.keyword === 'boolean') return 'unknown field';
  if (error.keyword === 'format') return DATE_TIME_RULE;
  return error.message;
}

const isValidTime = (s: string | null | undefined) => s == null || instantOf(s) !== null;
const ms = canonicalDateTime;
const msOrNull = (s: string | null | undefined) => (s == null ? null : ms(s));

/**
 * Checks the whole file before anything is written. Returns the first problem as
 * `path: what is wrong`, or null when the file can be loaded.
 */
export async function validateDataset(db: Queryable, data: unknown): Promise<string | null> {
  if (!Value.Check(DatasetSchema, data)) {
    const [first] = Value.Errors(DatasetSchema, data);
    const e = first as unknown as { instancePath: string; keyword: string; message: string; schemaPath: string };
    const path = dottedPath(e.instancePath) || '(file)';
    return `${path}: ${describe(e)}`;
  }
  const d = data as Dataset;
  const knownPlans = new Set((await db.query<{ name: string }>(sql('plans.names', 'SELECT name FROM plans'))).map((r) => r.name));
  for (const p of d.plans ?? []) knownPlans.add(p.name);
  const seenOrgs = new Set<string>();
  const seenKeys = new Set<string>();
  for (const [i, o] of (d.organizations ?? []).entries()) {
    const at = `organizations[${i}]`;
    if (seenOrgs.has(o.id)) return `${at}.id: duplicate organization id ${JSON.stringify(o.id)}`;
    seenOrgs.add(o.id);
    if (!knownPlans.has(o.plan)) return `${at}.plan: unknown plan ${JSON.stringify(o.plan)}`;
    if (!isValidTime(o.createdAt)) return `${at}.createdAt: not a valid date-time`;
    if (!isValidTime(o.deletedAt)) return `${at}.deletedAt: not a valid date-time`;
    for (const [j, k] of (o.apiKeys ?? []).entries()) {
      if (seenKeys.has(k.key)) return `${at}.apiKeys[${j}].key: duplicate key`;
      seenKeys.add(k.key);
    }
    const teams = await listTeamIds(db, o.id);
    const teamNames = new Set<string>();
    for (const [j, t] of (o.teams ?? []).entries()) {
      if (teams.has(t.id)) return `${at}.teams[${j}].id: duplicate team id ${JSON.stringify(t.id)}`;
      teams.add(t.id);
      const folded = t.name.trim().toLowerCase();
      if (teamNames.has(folded)) return `${at}.teams[${j}].name: duplicate team name ${JSON.stringify(t.name)}`;
      teamNames.add(folded);
      if (!isValidTime(t.createdAt)) return `${at}.teams[${j}].createdAt: not a valid date-time`;
    }
    const checkTeam = (list: { subteamId?: string | null }[] | undefined, name: string) => {
      for (const [j, x] of (list ?? []).entries()) {
        if (x.subteamId != null && !teams.has(x.subteamId)) return `${at}.${name}[${j}].subteamId: unknown team ${JSON.stringify(x.subteamId)}`;
      }
      return null;
    };
    const dupIds = (list: { id: string }[] | undefined, name: string) => {
      const seen = new Set<string>();
      for (const [j, x] of (list ?? []).entries()) {
        if (seen.has(x.id)) return `${at}.${name}[${j}].id: duplicate id ${JSON.stringify(x.id)}`;
        seen.add(x.id);
      }
      return null;
    };
    const problem =
      checkTeam(o.pulses, 'pulses') ??
      checkTeam(o.alerts, 'alerts') ??
      checkTeam(o.actions, 'actions') ??
      dupIds(o.pulses, 'pulses') ??
      dupIds(o.alerts, 'alerts') ??
      dupIds(o.actions, 'actions');
    if (problem) return problem;
    for (const [j, p] of (o.pulses ?? []).entries()) {
      if (!isValidTime(p.createdAt)) return `${at}.pulses[${j}].createdAt: not a valid date-time`;
    }
    for (const [j, a] of (o.alerts ?? []).entries()) {
      if (!isValidTime(a.createdAt) || !isValidTime(a.readAt)) return `${at}.alerts[${j}]: not a valid date-time`;
    }
    for (const [j, a] of (o.actions ?? []).entries()) {
      if (!isValidTime(a.startDate) || !isValidTime(a.createdAt) || !isValidTime(a.endDate)) return `${at}.actions[${j}]: not a valid date-time`;
      if (a.endDate != null && instantOf(a.endDate)! < instantOf(a.startDate)!) return `${at}.actions[${j}].endDate: must not be before startDate`;
    }
  }
  return null;
}

const upsertPlan = sql(
  'plans.upsert',
  `INSERT INTO plans (name, rest_api, rate_limit_per_minute) VALUES ($1, $2, $3)
   ON CONFLICT (name) DO UPDATE SET rest_api = EXCLUDED.rest_api, rate_limit_per_minute = EXCLUDED.rate_limit_per_minute`,
);
const upsertOrg = sql(
  'organizations.upsert',
  `INSERT INTO organizations (id, name, plan, member_count, created_at, deleted_at) VALUES ($1, $2, $3, $4, $5, $6)
   ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, plan = EXCLUDED.plan, member_count = EXCLUDED.member_count,
     created_at = EXCLUDED.created_at, deleted_at = EXCLUDED.deleted_at`,
);

const PULSE_BATCH = 5_000;

/**
 * Loads a dataset in one transaction: either every row is written or none. Ids and
 * timestamps are kept exactly as given.
 */
export async function loadDataset(db: DatabaseExecutor, data: unknown): Promise<LoadSummary> {
  const problem = await validateDataset(db, data);
  if (problem) throw invalid(problem);
  const d = data as Dataset;
  const summary: LoadSummary = { plans: 0, organizations: 0, apiKeys: 0, teams: 0, pulses: 0, pulsesInFrozenWeeks: 0, alerts: 0, actions: 0 };
  try {
    await db.transaction(async (tx) => {
      for (const p of d.plans ?? []) {
        await tx.query(upsertPlan, [p.name, p.restApi, p.rateLimitPerMinute]);
        summary.plans++;
      }
      for (const o of d.organizations ?? []) {
        await tx.query(upsertOrg, [o.id, o.name, o.plan, o.memberCount ?? 0, ms(o.createdAt), msOrNull(o.deletedAt)]);
        summary.organizations++;
        for (const k of o.apiKeys ?? []) {
          await createApiKey(tx, o.id, { secret: k.key, name: k.name ?? null, revoked: k.revoked ?? false });
          summary.apiKeys++;
        }
        const teams = (o.teams ?? []).map((t) => ({ id: t.id, name: t.name.trim(), createdAt: ms(t.createdAt) }));
        await insertTeams(tx, o.id, teams);
        summary.teams += teams.length;
        const pulses = o.pulses ?? [];
        const writer = new PulseWriter(tx, o.id, { onExisting: 'fail' });
        for (let i = 0; i < pulses.length; i += PULSE_BATCH) {
          await writer.write(
            pulses.slice(i, i + PULSE_BATCH).map((p) => ({
              id: p.id,
              level: p.level,
              reason: p.reason ?? null,
              comment: p.comment ?? null,
              moderationStatus: p.moderationStatus,
              subteamId: p.subteamId ?? null,
              createdAt: ms(p.createdAt),
            })),
          );
        }
        summary.pulses += await writer.finish();
        const tally = new FrozenWeekTally();
        for (const p of pulses) tally.add(p.createdAt);
        summary.pulsesInFrozenWeeks += await tally.count(tx, o.id);
        const alerts = (o.alerts ?? []).map((a) => ({
          id: a.id,
          type: a.type,
          message: a.message,
          weekISO: a.weekISO ?? null,
          subteamId: a.subteamId ?? null,
          readAt: msOrNull(a.readAt),
          createdAt: ms(a.createdAt),
        }));
        await insertAlerts(tx, o.id, alerts);
        summary.alerts += alerts.length;
        const actions = (o.actions ?? []).map((a) => ({
          id: a.id,
          title: a.title,
          description: a.description ?? null,
          startDate: ms(a.startDate),
          endDate: msOrNull(a.endDate),
          status: a.status,
          subteamId: a.subteamId ?? null,
          createdAt: ms(a.createdAt),
        }));
        await insertActions(tx, o.id, actions);
        summary.actions += actions.length;
      }
    });
  } catch (err) {
    const taken = alreadyExists(d, err);
    if (taken) throw invalid(taken);
    throw err;
  }
  return summary;
}

/**
 * A value of the file that a unique index of the database refused (validation has already refused
 * duplicates within the file), at its path: `organizations[0].pulses[3].id: a pulse with id "p_1"
 * already exists in organization "org_acme"`. Without a path when the value cannot be placed.
 */
function alreadyExists(d: Dataset, err: unknown): string | null {
  const first = uniqueViolation(err);
  if (!first) return null;
  for (const [i, o] of (d.organizations ?? []).entries()) {
    const v = uniqueViolation(err, o.id)!;
    if (v.value === undefined) continue;
    const at = (list: string, j: number, field: string) => (j < 0 ? null : `organizations[${i}].${list}[${j}].${field}: ${v.message}`);
    const place =
      v.field === 'key'
        ? at(
            'apiKeys',
            (o.apiKeys ?? []).findIndex((k) => hashKey(k.key).toString('hex') === v.value),
            'key',
          )
        : v.table === 'teams' && v.field === 'name'
          ? at(
              'teams',
              (o.teams ?? []).findIndex((t) => t.name.trim().toLowerCase() === v.value),
              'name',
            )
          : v.field === 'id' && ['pulses', 'alerts', 'actions', 'teams'].includes(v.table)
            ? at(
                v.table,
                (((o as Record<string, unknown>)[v.table] as { id: string }[] | undefined) ?? []).findIndex((x) => x.id === v.value),
                'id',
              )
            : null;
    if (place) return place;
  }
  return first.message;
}
