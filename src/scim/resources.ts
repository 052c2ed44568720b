import type { GroupInput, ScimGroup, ScimUserRow, UserInput } from '../domain/scim-roster.js';
import { groupVersion, ScimProblem, userVersion } from '../domain/scim-roster.js';
import type { ScimTeamFrom } from '../domain/scim.js';

/**
 * The mapping between SCIM's resources (RFC 7643) and the roster: what a User or Group says, read
 * into the domain's input, and a roster row written back as a resource. The only SCIM attributes
 * kept are the ones the roster needs (userName, emails, externalId, active, preferredLanguage, the
 * enterprise extension's department, a group's displayName, externalId and members); any other attribute an
 * identity provider sends (name, title, phoneNumbers...) is ignored, never stored (docs/scim.md).
 */
export const URN = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  bulkRequest: 'urn:ietf:params:scim:api:messages:2.0:BulkRequest',
  bulkResponse: 'urn:ietf:params:scim:api:messages:2.0:BulkResponse',
  spc: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export type Json = Record<string, unknown>;

export const etag = (version: string) => `W/"${version}"`;

export function userResource(u: ScimUserRow, base: string, teamFrom: ScimTeamFrom): Json {
  const r: Json = { schemas: teamFrom === 'department' ? [URN.user, URN.enterprise] : [URN.user], id: u.id };
  if (u.externalId !== null) r.externalId = u.externalId;
  r.userName = u.userName ?? u.email;
  r.active = u.active;
  r.emails = [{ value: u.email, type: 'work', primary: true }];
  // The roster's language, as stored (one of the offered locales); none: the organization's default applies.
  if (u.language !== null) r.preferredLanguage = u.language;
  if (u.active && u.teamId !== null) r.groups = [{ value: u.teamId, display: u.teamName ?? u.teamId, $ref: `${base}/Groups/${u.teamId}`, type: 'direct' }];
  if (teamFrom === 'department' && u.teamName !== null) r[URN.enterprise] = { department: u.teamName };
  r.meta = { resourceType: 'User', created: u.createdAt, lastModified: u.modifiedAt, location: `${base}/Users/${u.id}`, version: etag(userVersion(u)) };
  return r;
}

export function groupResource(g: ScimGroup, base: string): Json {
  const r: Json = { schemas: [URN.group], id: g.id };
  if (g.externalId !== null) r.externalId = g.externalId;
  r.displayName = g.name;
  r.members = g.members.map((m) => ({ value: m.id, display: m.userName, $ref: `${base}/Users/${m.id}`, type: 'User' }));
  r.meta = { resourceType: 'Group', created: g.createdAt, lastModified: g.modifiedAt, location: `${base}/Groups/${g.id}`, version: etag(groupVersion(g)) };
  return r;
}

const invalidValue = (message: string) => new ScimProblem(400, 'invalidValue', message);

/** A key of `o` matched case-insensitively (RFC 7643 section 2.1: attribute names are). */
export function pick(o: Json, name: string): unknown {
  const lower = name.toLowerCase();
  const key = Object.keys(o).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : o[key];
}

/** Entra sends booleans as "True" and "False" in PATCH values. */
function bool(v: unknown, name: string, absent: boolean): boolean {
  if (v === undefined || v === null) return absent;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw invalidValue(`'${name}' must be true or false.`);
}

function optionalString(v: unknown, name: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw invalidValue(`'${name}' must be a string.`);
  return v;
}

/** Folds attributes sent by their full name (`urn:...:User:userName`, `urn:...:enterprise:2.0:User:department`) into their place. */
export function normalizeResource(o: Json, core: string): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) {
    if (k.toLowerCase().startsWith(`${URN.enterprise.toLowerCase()}:`)) {
      const ext = (typeof out[URN.enterprise] === 'object' && out[URN.enterprise] !== null ? out[URN.enterprise] : {}) as Json;
      ext[k.slice(URN.enterprise.length + 1)] = v;
      out[URN.enterprise] = ext;
    } else if (k.toLowerCase() === URN.enterprise.toLowerCase()) {
      const ext = (typeof out[URN.enterprise] === 'object' && out[URN.enterprise] !== null ? out[URN.enterprise] : {}) as Json;
      out[URN.enterprise] = { ...ext, ...(typeof v === 'object' && v !== null ? (v as Json) : {}) };
    } else if (k.toLowerCase().startsWith(`${core.toLowerCase()}:`)) out[k.slice(core.length + 1)] = v;
    else out[k] = v;
  }
  return out;
}

/** The address: the primary email, else the work one, else the first, else the userName. */
function addressOf(emails: unknown, userName: string): string {
  if (emails === undefined || emails === null) return userName;
  if (!Array.isArray(emails)) throw invalidValue("'emails' must be a list.");
  const list = emails.filter((e): e is Json => typeof e === 'object' && e !== null && typeof pick(e as Json, 'value') === 'string');
  const primary = list.find((e) => bool(pick(e, 'primary'), 'emails.primary', false));
  const work = list.find((e) => String(pick(e, 'type') ?? '').toLowerCase() === 'work');
  const chosen = primary ?? work ?? list[0];
  return chosen ? (pick(chosen, 'value') as string) : userName;
}

/** A User resource (POST, PUT, or a PATCH applied) read into what the roster keeps. */
export function userInput(raw: Json): UserInput {
  const o = normalizeResource(raw, URN.user);
  const userName = pick(o, 'userName');
  if (typeof userName !== 'string' || userName.trim() === '') throw invalidValue("'userName' is required (a string).");
  const ext = pick(o, URN.enterprise);
  const department = typeof ext === 'object' && ext !== null ? pick(ext as Json, 'department') : undefined;
  if (department !== undefined && department !== null && typeof department !== 'string') throw invalidValue("'department' must be a string.");
  // Any value is taken (the domain keeps a language it offers, else none): an IdP is never refused for it.
  const language = pick(o, 'preferredLanguage');
  return {
    userName,
    email: addressOf(pick(o, 'emails'), userName.trim()),
    externalId: optionalString(pick(o, 'externalId'), 'externalId'),
    active: bool(pick(o, 'active'), 'active', true),
    department: (department as string | null | undefined) ?? null,
    language: typeof language === 'string' ? language : null,
  };
}

/** A Group resource read into the team's name, externalId and members' ids. */
export function groupInput(raw: Json): GroupInput {
  const o = normalizeResource(raw, URN.group);
  const displayName = pick(o, 'displayName');
  if (typeof displayName !== 'string' || displayName.trim() === '') throw invalidValue("'displayName' is required (a string).");
  const members = pick(o, 'members') ?? [];
  if (!Array.isArray(members)) throw invalidValue("'members' must be a list.");
  const ids = members.map((m, i) => {
    const v = typeof m === 'object' && m !== null ? pick(m as Json, 'value') : undefined;
    if (typeof v !== 'string' || v === '') throw invalidValue(`'members[${i}].value' must be a user's id.`);
    return v;
  });
  return { displayName, externalId: optionalString(pick(o, 'externalId'), 'externalId'), members: [...new Set(ids)] };
}

/** What a User keeps, lower case: an attribute outside it is ignored by PUT and PATCH alike. */
export const USER_ATTRIBUTES = new Set([
  'schemas',
  'id',
  'externalid',
  'username',
  'active',
  'emails',
  'preferredlanguage',
  'groups',
  'meta',
  URN.enterprise.toLowerCase(),
]);
export const GROUP_ATTRIBUTES = new Set(['schemas', 'id', 'externalid', 'displayname', 'members', 'meta']);

// ---- attributes and excludedAttributes (RFC 7644 section 3.9) -------------------------------

/** An attribute name as a path: [top] or [top, sub]; the enterprise extension's are [urn, sub]. */
function pathOf(name: string, core: string): string[] {
  const n = name.trim();
  const lower = n.toLowerCase();
  if (lower.startsWith(`${URN.enterprise.toLowerCase()}:`)) return [URN.enterprise, ...n.slice(URN.enterprise.length + 1).split('.')];
  if (lower === URN.enterprise.toLowerCase()) return [URN.enterprise];
  if (lower.startsWith(`${core.toLowerCase()}:`)) return n.slice(core.length + 1).split('.');
  return n.split('.');
}

const ALWAYS = new Set(['schemas', 'id']);

function keyOf(o: Json, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(o).find((k) => k.toLowerCase() === lower);
}

/** Keeps only the attributes asked for (and those always returned). */
export function project(resource: Json, attributes: string | undefined, excluded: string | undefined, core: string): Json {
  if (attributes) {
    const paths = attributes
      .split(',')
      .filter(Boolean)
      .map((a) => pathOf(a, core));
    const out: Json = {};
    for (const k of Object.keys(resource)) if (ALWAYS.has(k)) out[k] = resource[k];
    for (const [top, sub] of paths) {
      const k = keyOf(resource, top);
      if (k === undefined) continue;
      const v = resource[k];
      if (sub === undefined || typeof v !== 'object' || v === null) out[k] = v;
      else if (Array.isArray(v)) {
        const before = Array.isArray(out[k]) ? (out[k] as Json[]) : [];
        out[k] = v.map((item, i) => {
          const sk = typeof item === 'object' && item !== null ? keyOf(item as Json, sub) : undefined;
          return sk === undefined ? (before[i] ?? {}) : { ...(before[i] ?? {}), [sk]: (item as Json)[sk] };
        });
      } else {
        const sk = keyOf(v as Json, sub);
        if (sk !== undefined) out[k] = { ...((out[k] as Json | undefined) ?? {}), [sk]: (v as Json)[sk] };
      }
    }
    return out;
  }
  if (excluded) {
    const out: Json = { ...resource };
    for (const [top, sub] of excluded
      .split(',')
      .filter(Boolean)
      .map((a) => pathOf(a, core))) {
      const k = keyOf(out, top);
      if (k === undefined || ALWAYS.has(k)) continue;
      if (sub === undefined) delete out[k];
      else if (typeof out[k] === 'object' && out[k] !== null && !Array.isArray(out[k])) {
        const copy = { ...(out[k] as Json) };
        const sk = keyOf(copy, sub);
        if (sk !== undefined) delete copy[sk];
        out[k] = copy;
      } else if (Array.isArray(out[k])) {
        out[k] = (out[k] as Json[]).map((item) => {
          const copy = { ...item };
          const sk = keyOf(copy, sub);
          if (sk !== undefined) delete copy[sk];
          return copy;
        });
      }
    }
    return out;
  }
  return resource;
}
