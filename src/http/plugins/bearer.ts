import type { FastifyRequest } from 'fastify';
import { named } from '../plugin.js';

const BEARER = /^bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i;

/** What a request's `Authorization` says, read the same way by every face that takes a bearer token. */
export interface BearerHeader {
  /** False when the client sent several Authorization headers (Node keeps only the first): refused. */
  single: boolean;
  /** The token of a well-formed `Bearer <token>` header (the scheme word in any case). */
  token?: string;
  /** A token was sent (or several headers were), so a refusal says `error="invalid_token"` (RFC 6750). */
  sent: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The one reading of `Authorization` (a duplicate header is refused by whoever checks the token). */
    bearer(): BearerHeader;
  }
}

function readBearer(request: FastifyRequest): BearerHeader {
  const raw = request.raw.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') n++;
  const single = n <= 1;
  const header = request.headers.authorization;
  const m = single && typeof header === 'string' ? BEARER.exec(header) : null;
  return { single, token: m?.[1], sent: m !== null || !single };
}

/** `request.bearer()`: the public API's keys and the operator token are read by it alone. */
export const bearerReading = named('bearer-reading', (app) => {
  app.decorateRequest('bearer', function (this: FastifyRequest) {
    return readBearer(this);
  });
});
