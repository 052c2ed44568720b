import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { toApiError, withoutValues } from '../../http/plugins/index.js';
import { html, notice } from '../html.js';
import { sendPage } from '../views/layout.js';

/** A page that explains a refusal, with the status it deserves. */
export function refusalPage(reply: FastifyReply, status: number, title: string, message: string) {
  return sendPage(reply, status, { title, body: html`<h1>${title}</h1>${notice(message)}<p><a href="/console">Back to the console</a></p>` });
}

/**
 * Every error of a console request, and every unknown console address, answered as a page. Our
 * own refusals and Fastify's (below 500) say what they say; any other failure is read as the API
 * reads it (toApiError: a value the database cannot store is 400, an unavailable database 503),
 * and a 5xx is logged without the values the request carried (withoutValues).
 */
export function registerConsoleErrors(scope: FastifyInstance) {
  scope.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const own = err instanceof ApiError || (err.statusCode !== undefined && err.statusCode < 500);
    const read = own ? null : toApiError(err as Parameters<typeof toApiError>[0]);
    const status = read ? read.statusCode : err.statusCode!;
    if (status >= 500) request.log.error({ err: withoutValues(err) }, 'console request failed');
    if (read) reply.headers(read.headers);
    return refusalPage(
      reply,
      status,
      status >= 500 ? 'Something went wrong' : 'Request refused',
      status >= 500 ? 'The request failed on our side; try again in a moment.' : read ? read.message : err.message,
    );
  });
  scope.setNotFoundHandler(async (_request, reply) => refusalPage(reply, 404, 'Page not found', 'There is no console page at this address.'));
}
