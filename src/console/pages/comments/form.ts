import type { FastifyRequest } from 'fastify';
import { CommentListQuerySchema, type CommentListQuery } from '../../../contract/schemas/comments.js';
import { asApiRequest, queryText, type Form } from '../../plugins/index.js';

/** The page's filters: the range, the team and the page, as GET /v1/comments names them. */
export const FILTERS = ['from', 'to', 'subteamId', 'cursor'] as const;
export type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** The filters of the page's address (a parameter given twice is refused; '' is none). */
export const filtersOfQuery = (request: FastifyRequest): Filters => Object.fromEntries(FILTERS.map((k) => [k, queryText(request, k)])) as Filters;

/** The filters a hide or show form carries back, so its redirect returns to the same page. */
export const filtersOfForm = (form: Form): Filters =>
  Object.fromEntries(FILTERS.map((k) => [k, typeof form[k] === 'string' && form[k] !== '' ? form[k] : undefined]));

/** The filters as GET /v1/comments' query, checked by its schema (the API's rules and messages). */
export const commentQueryOf = (f: Filters, limit: number): CommentListQuery =>
  asApiRequest<CommentListQuery>(CommentListQuerySchema, { ...Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)), limit }, 'querystring');

/** The page's address for these filters. */
export const commentsHref = (f: Filters) => {
  const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== undefined) as [string, string][]).toString();
  return `/console/comments${q ? `?${q}` : ''}`;
};

/** The hide and show forms' comment handle (the domain refuses an unknown one). */
export const handleOf = (form: Form) => form.handle ?? '';
