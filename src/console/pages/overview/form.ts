import type { FastifyRequest } from 'fastify';
import { queryText } from '../../plugins/index.js';

/** The range form (a GET query) as overviewStats' input: the domain checks the days and the team. */
export const overviewRangeOf = (request: FastifyRequest) => ({
  from: queryText(request, 'from'),
  to: queryText(request, 'to'),
  team: queryText(request, 'team'),
});
