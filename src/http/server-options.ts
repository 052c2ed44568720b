import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions } from 'fastify';
import { ApiError } from '../contract/errors.js';
import { sendError } from './plugins/errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The Fastify options both apps (public and operator) share, so that every listener answers in the
 * contract's shape: X-Request-Id echoed when valid (else a new UUID), ids of up to 128 characters
 * in paths, and the router's own errors (raised before any hook runs) as `invalid_request`.
 */
export const contractServerOptions = {
  genReqId: (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  },
  // Ids are up to 128 characters; Fastify's default path-parameter limit is 100.
  routerOptions: { ignoreDuplicateSlashes: false, ignoreTrailingSlash: false, maxParamLength: 128 },
  frameworkErrors: (err, request, reply) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
    const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long.' : 'The URL is not valid (malformed percent-encoding?).';
    sendError(reply, new ApiError('invalid_request', message));
  },
} satisfies Pick<FastifyServerOptions, 'genReqId' | 'routerOptions' | 'frameworkErrors'>;
