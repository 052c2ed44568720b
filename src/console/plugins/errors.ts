import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { html, notice } from '../html.js';
import { sendPage } from '../views/layout.js';

/** A page that explains a refusal, with the status it deserves. */
export function refusalPage(reply: FastifyReply, status: number, title: string, message: string) {
  return sendPage(reply, status, { title, body: html`<h1>${title}</h1>${notice(message)}<p><a href="/console">Back to the console</a></p>` });
}

/** Every error of a console request, and every unknown console address, answered as a page. */
export function registerConsoleErrors(scope: FastifyInstance) {
  scope.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const status = err instanceof ApiError ? err.statusCode : err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    if (status >= 500) request.log.error({ err }, 'console request failed');
    return refusalPage(
      reply,
      status,
      status >= 500 ? 'Something went wrong' : 'Request refused',
      status >= 500 ? 'The request failed on our side; try again in a moment.' : err.message,
    );
  });
  scope.setNotFoundHandler(async (_request, reply) => refusalPage(reply, 404, 'Page not found', 'There is no console page at this address.'));
}
