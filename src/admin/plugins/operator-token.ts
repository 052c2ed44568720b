import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../contract/errors.js';
import { named } from '../../http/plugin.js';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export interface OperatorTokenOptions {
  /** ADMIN_TOKEN, which every request must carry (the TCP listener on ADMIN_PORT). */
  token: string;
}

/**
 * The operator token check of the operator API's TCP listener: `Authorization: Bearer <ADMIN_TOKEN>`,
 * read by the base's bearer reading, compared in constant time, refused before any body is read.
 */
export const operatorToken = named<OperatorTokenOptions>('operator-token', (app, opts) => {
  const expected = digest(opts.token);
  app.addHook('onRequest', async (request) => {
    // Two Authorization headers are ambiguous (Node keeps the first): refused, as on the public API.
    const { single, token, sent } = request.bearer();
    // Compared as digests, so the comparison takes the same time whatever the length sent.
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      // Closed after the answer: a client without the token holds no connection (and no body is read).
      const headers = { 'www-authenticate': `Bearer realm="climate-pulse-admin"${sent ? ', error="invalid_token"' : ''}`, connection: 'close' };
      const message = !single
        ? 'Send exactly one Authorization header.'
        : token !== undefined
          ? 'The operator token is not valid.'
          : "Send 'Authorization: Bearer <ADMIN_TOKEN>'.";
      throw new ApiError('unauthorized', message, headers);
    }
  });
});
