import type { DatabaseExecutor, Queryable } from '../db/executor.js';
import { eraseOrgRows, getOrg, getOrgRecord, insertOrg, listOrgRecords, softDeleteOrg, updateOrg, type OrgRecord } from '../db/repositories/orgs.js';
import type { Org } from '../contract/schemas/org.js';
import { getPlan } from '../db/repositories/plans.js';
import { ApiError, invalid } from '../contract/errors.js';
import { listAuditEvents, recordAudit, type Actor } from './audit.js';
import { newId } from './ids.js';

export type { OrgRecord };

const notFound = (orgId: string) => new ApiError('not_found', `no organization ${JSON.stringify(orgId)}`);

async function requirePlan(db: Queryable, plan: string) {
  if (!(await getPlan(db, plan))) throw invalid(`Body field 'plan' names no plan: ${JSON.stringify(plan)}.`);
}

/** `POST /admin/v1/organizations` and `orgs create`. An id already taken (deleted or not) is refused. */
export async function createOrganization(
  db: DatabaseExecutor,
  input: { id?: string; name: string; plan: string; memberCount?: number },
  actor: Actor,
  now: Date,
): Promise<OrgRecord> {
  return db.transaction(async (tx) => {
    await requirePlan(tx, input.plan);
    const id = input.id ?? newId('org');
    const created = await insertOrg(tx, id, { name: input.name, plan: input.plan, memberCount: input.memberCount ?? 0, createdAt: now });
    if (!created) throw invalid(`Body field 'id': an organization ${JSON.stringify(id)} already exists.`);
    const details = { name: created.name, plan: created.plan, memberCount: created.memberCount };
    await recordAudit(tx, id, actor, { action: 'organization.created', target: { kind: 'organization', id }, details }, now);
    return created;
  });
}

/** Deleted organizations too: the operator sees them. */
export async function getOrganizationRecord(db: Queryable, orgId: string): Promise<OrgRecord> {
  const org = await getOrgRecord(db, orgId);
  if (!org) throw notFound(orgId);
  return org;
}

/**
 * `PATCH /admin/v1/organizations/{orgId}` and `orgs update`. The audit row names the fields whose
 * value changed (`changed`) with their new values (none of them secret).
 */
export async function updateOrganization(
  db: DatabaseExecutor,
  orgId: string,
  patch: { name?: string; plan?: string; memberCount?: number },
  actor: Actor,
  now: Date,
): Promise<OrgRecord> {
  return db.transaction(async (tx) => {
    if (patch.plan !== undefined) await requirePlan(tx, patch.plan);
    const before = await getOrgRecord(tx, orgId);
    // A deleted organization is not changed (PATCH renamed one): 404, as every other operator operation on it.
    if (before?.deletedAt) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)} (or it is deleted)`);
    const org = before && (await updateOrg(tx, orgId, patch));
    if (!org) throw notFound(orgId);
    const fields = (['name', 'plan', 'memberCount'] as const).filter((f) => org[f] !== before![f]);
    const details = { changed: fields, ...Object.fromEntries(fields.map((f) => [f, org[f]])) };
    await recordAudit(tx, orgId, actor, { action: 'organization.updated', target: { kind: 'organization', id: orgId }, details }, now);
    return org;
  });
}

/**
 * Soft delete: the public API answers 404 org_not_found from then on (within the key cache's
 * 5 s); the audit log keeps its rows and gains `organization.deleted`. With `erase`, every row of
 * the organization goes too, in one transaction, its audit log included: an erasure leaves no row
 * to record it in (the operator API's request log line is its trace).
 */
export async function deleteOrganization(
  db: DatabaseExecutor,
  orgId: string,
  opts: { erase: boolean },
  actor: Actor,
  now: Date,
): Promise<{ organization: OrgRecord; erased: boolean; rowsRemoved?: Record<string, number> }> {
  return db.transaction(async (tx) => {
    const org = await softDeleteOrg(tx, orgId, now);
    if (!org) throw notFound(orgId);
    if (!opts.erase) {
      await recordAudit(tx, orgId, actor, { action: 'organization.deleted', target: { kind: 'organization', id: orgId } }, now);
      return { organization: org, erased: false };
    }
    const rowsRemoved = await eraseOrgRows(tx, orgId);
    return { organization: org, erased: true, rowsRemoved };
  });
}

/**
 * GET /org: the organization of an API key, as the public API shows it. A key's organization
 * deleted between the key check and this read is `org_not_found`, as the key check would say.
 */
export async function getOrganization(db: Queryable, orgId: string): Promise<Org> {
  const org = await getOrg(db, orgId);
  if (!org) throw new ApiError('org_not_found', 'The organization of this API key no longer exists.');
  return org;
}

/**
 * The one home of "the organization exists and is not deleted" for operator operations: a
 * deleted or unknown organization is 404 not_found (the public API says org_not_found from the key
 * check); the message is what the CLI prints.
 */
export async function requireLiveOrg(db: Queryable, orgId: string): Promise<void> {
  if (!(await getOrg(db, orgId))) throw new ApiError('not_found', `no organization ${JSON.stringify(orgId)} (or it is deleted)`);
}

/**
 * `GET /admin/v1/organizations` and `orgs list`: every organization, deleted ones marked, newest
 * first. The cursor is the position of the last item (its creation time and id), base64url.
 */
export async function listOrganizations(db: Queryable, opts: { limit: number; cursor?: string }): Promise<{ items: OrgRecord[]; nextCursor: string | null }> {
  let after: { createdAt: string; id: string } | null = null;
  if (opts.cursor !== undefined) {
    const [createdAt, id, extra] = Buffer.from(opts.cursor, 'base64url').toString('utf8').split('|');
    if (extra !== undefined || !id || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(createdAt ?? '') || Number.isNaN(Date.parse(createdAt))) {
      throw new ApiError('invalid_cursor', "Query parameter 'cursor' is not a cursor of this list.");
    }
    after = { createdAt, id };
  }
  const rows = await listOrgRecords(db, opts.limit + 1, after);
  const items = rows.slice(0, opts.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > opts.limit && last ? Buffer.from(`${last.createdAt}|${last.id}`).toString('base64url') : null };
}

/**
 * The audit log of an organization that exists: 404 for an unknown (or erased) one; a deleted one
 * keeps its log (the operator API's GET .../audit).
 */
export async function listOrgAuditEvents(db: Queryable, orgId: string, q: Parameters<typeof listAuditEvents>[2]) {
  await getOrganizationRecord(db, orgId);
  return listAuditEvents(db, orgId, q);
}
