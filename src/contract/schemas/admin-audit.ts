import { Type, type Static } from 'typebox';
import { DateTimeSchema, Nullable } from './common.js';

/** Who made a change (CONTRACT.md section 11): a console member, the operator, or an API key. */
export const AUDIT_ACTOR_KINDS = ['member', 'operator', 'key'] as const;
const ActorKind = Type.Union([Type.Literal('member'), Type.Literal('operator'), Type.Literal('key')], {
  description: 'member: a person signed in to the console; operator: the operator API or the CLI; key: an API key of the organization.',
});

/** What a change was: `<resource>.<verb>`. */
export const AUDIT_ACTIONS = [
  'organization.created',
  'organization.updated',
  'organization.deleted',
  'key.created',
  'key.revoked',
  'team.created',
  'action.created',
  'action.updated',
  'pulses.ingested',
  'pulses.imported',
  'pulse.moderated',
  'alert.read',
  'alert.unread',
  'webhook_endpoint.created',
  'webhook_endpoint.removed',
  'webhook_endpoint.enabled',
  'webhook_endpoint.tested',
  'webhook_delivery.replayed',
  'key.rolled',
  'member.invited',
  'member.invitation_revoked',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.signed_in',
  'member.sign_in_failed',
  'member.two_factor_enabled',
  'member.password_changed',
  'organization.two_factor_required',
  'webhook_endpoint.disabled',
  'webhook_endpoint.secret_rotated',
  'webhook_deliveries.resent',
  'comment.hidden',
  'comment.shown',
  'respondent.added',
  'respondent.removed',
  'respondent.moved',
  'roster.replaced',
  'checkin_settings.updated',
  'checkin_links.exported',
  'checkin_link.resent',
  'audit_log.exported',
  'retention.updated',
  'member.sessions_ended',
  'checkin_round.started',
  'checkin_mail.tested',
  'member.passkey_added',
  'member.passkey_renamed',
  'member.passkey_removed',
  'member.passkey_refused',
  'organization.passkeys_required',
  'sso.configured',
  'sso.removed',
  'sso.required',
  'sso_domain.added',
  'sso_domain.verified',
  'sso_domain.removed',
  'scim_token.created',
  'scim_token.rolled',
  'scim_token.revoked',
  'scim_settings.updated',
  'respondent.readdressed',
  'team.renamed',
  'team.removed',
  'scim_user.inactive',
  'scim_user.deleted',
  'respondent.language_changed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditEventSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128, description: 'Event id (aud_...).' }),
    createdAt: DateTimeSchema('When the change was made (the time of its transaction).'),
    actor: Type.Object(
      {
        kind: ActorKind,
        id: Nullable(Type.String({ description: "The member's or the key's id; null for the operator." })),
        label: Type.String({ description: "The member's email, the key's display prefix, or `operator`." }),
      },
      { additionalProperties: false },
    ),
    action: Type.String({ description: `What was done: ${AUDIT_ACTIONS.join(', ')}.` }),
    target: Type.Object(
      {
        kind: Type.String({
          description:
            'What it was done to: organization, key, team, action, pulses, pulse, alert, webhook_endpoint, webhook_delivery, webhook_deliveries (a resend of every failed one since a time), comment (by its console handle, never its pulse).',
        }),
        id: Nullable(
          Type.String({
            description:
              "The target's id; null where there is none (a batch of pulses) or where naming it would tell which pulse wrote a comment (moderation).",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    address: Nullable(Type.String({ description: "The client's address (TRUST_PROXY decides which); null when there is none (the operator's Unix socket)." })),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "Small facts of the change: a key's name and scope, the names and new values of an organization's changed fields, counts of an ingestion or import, the new moderation status. Never a secret, key, hash, password, token or comment text.",
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'aud_8fQ2mZ0aLr4TbX1c',
        createdAt: '2026-11-20T08:15:00.000Z',
        actor: { kind: 'operator', id: null, label: 'operator' },
        action: 'key.created',
        target: { kind: 'key', id: 'key_0aB1cD2eF3gH4iJ5' },
        address: '127.0.0.1',
        details: { name: 'ci', scope: 'read', prefix: 'cp_live_Ab3dE1', expiresAt: null },
      },
    ],
  },
);
export type AuditEvent = Static<typeof AuditEventSchema>;

export const AuditQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 50, description: 'Page size, 1-100.' })),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'The `nextCursor` of the previous page (`createdAt|id` of its last item).' }),
    ),
    actorKind: Type.Optional(ActorKind),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only events of this action (key.created, ...).' })),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuerySchema>;

export const AuditEventListSchema = Type.Object(
  {
    items: Type.Array(AuditEventSchema, { maxItems: 100 }),
    nextCursor: Nullable(Type.String({ maxLength: 512, description: 'Pass as `cursor` to get the next page; null when there are no more pages.' })),
  },
  {
    additionalProperties: false,
    description: "One page of the organization's audit log, newest first. Repeat the same filters with `cursor` for the next page.",
  },
);
export type AuditEventList = Static<typeof AuditEventListSchema>;

/** Days an organization keeps its audit entries, and its webhook delivery log (docs/decisions.md). */
export const RETENTION_BOUNDS = { auditDays: { min: 30, max: 3650, default: 365 }, deliveryDays: { min: 1, max: 365, default: 30 } } as const;

const auditDays = Type.Integer({
  format: 'int32',
  minimum: RETENTION_BOUNDS.auditDays.min,
  maximum: RETENTION_BOUNDS.auditDays.max,
  description: `Days an audit entry is kept, ${RETENTION_BOUNDS.auditDays.min}-${RETENTION_BOUNDS.auditDays.max} (default ${RETENTION_BOUNDS.auditDays.default}); older ones are deleted by the retention job.`,
});
const deliveryDays = Type.Integer({
  format: 'int32',
  minimum: RETENTION_BOUNDS.deliveryDays.min,
  maximum: RETENTION_BOUNDS.deliveryDays.max,
  description: `Days a finished webhook delivery (and then its event's payload) is kept, ${RETENTION_BOUNDS.deliveryDays.min}-${RETENTION_BOUNDS.deliveryDays.max} (default ${RETENTION_BOUNDS.deliveryDays.default}); a pending delivery is never deleted.`,
});

export const RetentionSchema = Type.Object(
  { auditDays, deliveryDays },
  {
    additionalProperties: false,
    description: 'How long the organization keeps its audit log and its webhook delivery log.',
    examples: [{ auditDays: 365, deliveryDays: 30 }],
  },
);
export type Retention = Static<typeof RetentionSchema>;

export const RetentionPatchSchema = Type.Object(
  { auditDays: Type.Optional(auditDays), deliveryDays: Type.Optional(deliveryDays) },
  { additionalProperties: false, minProperties: 1, description: 'The values to change; a field not given keeps its value.' },
);
export type RetentionPatch = Static<typeof RetentionPatchSchema>;

export const AuditExportQuerySchema = Type.Object(
  {
    format: Type.Union([Type.Literal('jsonl'), Type.Literal('csv')], {
      description:
        'jsonl: one event per line, each the shape of an item of listAuditEvents; csv: a header row, then id, createdAt, actorKind, actorId, actorLabel, action, targetKind, targetId, address, details (JSON). No CSV cell starts with = + - @, a tab or a carriage return: such a cell gets a leading apostrophe, so no spreadsheet reads it as a formula.',
    }),
    from: Type.Optional(DateTimeSchema('The first instant of the range (inclusive); default: the beginning of the log.', '2026-11-01T00:00:00.000Z')),
    to: Type.Optional(DateTimeSchema('The end of the range (exclusive); default: the time of the request.', '2026-12-01T00:00:00.000Z')),
  },
  { additionalProperties: false },
);
export type AuditExportQuery = Static<typeof AuditExportQuerySchema>;
