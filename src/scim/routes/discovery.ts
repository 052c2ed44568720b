import type { FastifyInstance } from 'fastify';
import { ScimProblem } from '../../domain/scim-roster.js';
import { URN, type Json } from '../resources.js';
import { ScimSchemaIdParamsSchema } from '../schemas.js';
import type { ScimDeps } from './types.js';

/**
 * ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 section 4, RFC 7643 sections 5-7):
 * what this service provider does, said to the identity provider in its own terms. The Schemas
 * list only the attributes the roster keeps; an identity provider reads them to know what to send.
 */
const attr = (name: string, type: string, extra: Json = {}): Json => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

function userSchema(): Json {
  return {
    id: URN.user,
    name: 'User',
    description: 'A person of the check-ins roster (a respondent): their address, and whether they are on the roster.',
    attributes: [
      attr('userName', 'string', {
        required: true,
        uniqueness: 'server',
        description: "Unique identifier for the User; the address when no 'emails' value is given.",
      }),
      attr('active', 'boolean', { description: 'false takes the person off the roster from the next weekly round.' }),
      {
        ...attr('emails', 'complex', {
          multiValued: true,
          description: "The person's addresses; the primary one (else the work one, else the first) receives the check-ins.",
        }),
        subAttributes: [
          attr('value', 'string', { description: 'An email address.' }),
          attr('type', 'string', { canonicalValues: ['work', 'home', 'other'], description: 'work, home or other.' }),
          attr('primary', 'boolean', { description: 'The address the check-ins go to.' }),
        ],
      },
      attr('preferredLanguage', 'string', {
        description:
          "The language of the person's check-in mails (a language tag as in Accept-Language, such as tr-TR): kept as the nearest language offered (tr), or none when none is near, so that the organization's default applies.",
      }),
      {
        ...attr('groups', 'complex', { multiValued: true, mutability: 'readOnly', description: "The person's team, as a Group." }),
        subAttributes: [
          attr('value', 'string', { mutability: 'readOnly', description: "The Group's id." }),
          attr('$ref', 'reference', { mutability: 'readOnly', referenceTypes: ['Group'], description: "The Group's URI." }),
          attr('display', 'string', { mutability: 'readOnly', description: "The team's name." }),
          attr('type', 'string', { mutability: 'readOnly', canonicalValues: ['direct'], description: 'direct.' }),
        ],
      },
    ],
    meta: { resourceType: 'Schema', location: '' },
  };
}

function enterpriseSchema(): Json {
  return {
    id: URN.enterprise,
    name: 'EnterpriseUser',
    description: 'Enterprise User: only department is kept.',
    attributes: [attr('department', 'string', { description: "The person's team, when the organization takes teams from the department." })],
    meta: { resourceType: 'Schema', location: '' },
  };
}

function groupSchema(): Json {
  return {
    id: URN.group,
    name: 'Group',
    description: 'A team.',
    attributes: [
      attr('displayName', 'string', { required: true, uniqueness: 'server', description: "The team's name (1-80 characters)." }),
      {
        ...attr('members', 'complex', { multiValued: true, description: 'The people of the team; a person is in one team at a time.' }),
        subAttributes: [
          attr('value', 'string', { mutability: 'immutable', description: "The member's User id." }),
          attr('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User'], description: "The member's URI." }),
          attr('display', 'string', { mutability: 'readOnly', description: "The member's userName." }),
          attr('type', 'string', { mutability: 'immutable', canonicalValues: ['User'], description: 'User.' }),
        ],
      },
    ],
    meta: { resourceType: 'Schema', location: '' },
  };
}

export function registerDiscoveryRoutes(scope: FastifyInstance, deps: ScimDeps) {
  const schemas = () =>
    [userSchema(), enterpriseSchema(), groupSchema()].map(
      (s): Json => ({
        schemas: [URN.schema],
        ...s,
        meta: { resourceType: 'Schema', location: `${deps.baseUrl}/Schemas/${s.id as string}` },
      }),
    );
  const resourceTypes = () => [
    {
      schemas: [URN.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'The people of the check-ins roster',
      schema: URN.user,
      schemaExtensions: [{ schema: URN.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${deps.baseUrl}/ResourceTypes/User` },
    },
    {
      schemas: [URN.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'The teams',
      schema: URN.group,
      meta: { resourceType: 'ResourceType', location: `${deps.baseUrl}/ResourceTypes/Group` },
    },
  ];
  const list = (items: Json[]) => ({ schemas: [URN.list], totalResults: items.length, startIndex: 1, itemsPerPage: items.length, Resources: items });
  const hidden = { hide: true };

  scope.get('/ServiceProviderConfig', { schema: hidden }, async (_request, reply) => {
    reply.type('application/scim+json; charset=utf-8');
    return {
      schemas: [URN.spc],
      patch: { supported: true },
      bulk: { supported: true, maxOperations: deps.bulkMaxOperations, maxPayloadSize: deps.bodyLimitBytes },
      filter: { supported: true, maxResults: deps.maxResults },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      authenticationSchemes: [
        {
          type: 'oauthbearertoken',
          name: 'OAuth Bearer Token',
          description: "Authentication by the organization's SCIM token (cp_scim_...), made in the console's Provisioning page.",
          primary: true,
        },
      ],
      meta: { resourceType: 'ServiceProviderConfig', location: `${deps.baseUrl}/ServiceProviderConfig` },
    };
  });

  scope.get('/ResourceTypes', { schema: hidden }, async (_request, reply) => {
    reply.type('application/scim+json; charset=utf-8');
    return list(resourceTypes());
  });
  scope.get<{ Params: { id: string } }>('/ResourceTypes/:id', { schema: { ...hidden, params: ScimSchemaIdParamsSchema } }, async (request, reply) => {
    const found = resourceTypes().find((r) => r.id === request.params.id);
    if (!found) throw new ScimProblem(404, undefined, `No resource type ${JSON.stringify(request.params.id)}.`);
    reply.type('application/scim+json; charset=utf-8');
    return found;
  });
  scope.get('/Schemas', { schema: hidden }, async (_request, reply) => {
    reply.type('application/scim+json; charset=utf-8');
    return list(schemas());
  });
  scope.get<{ Params: { id: string } }>('/Schemas/:id', { schema: { ...hidden, params: ScimSchemaIdParamsSchema } }, async (request, reply) => {
    const found = schemas().find((s) => s.id === request.params.id);
    if (!found) throw new ScimProblem(404, undefined, `No schema ${JSON.stringify(request.params.id)}.`);
    reply.type('application/scim+json; charset=utf-8');
    return found;
  });
}
