import type { Form } from '../../plugins/index.js';

/** The add form as createRespondent's input (the domain checks the address and the team). */
export const respondentOf = (form: Form) => ({ email: form.email ?? '', team: form.team || null });

/** The move form's team: none when left empty. */
export const teamOf = (form: Form) => form.team || null;

export const PAGE_SIZE = 50;

/** The roster's search and page, from a page's query or a change's `back` field; anything else is ignored. */
export function rosterQuery(params: URLSearchParams | Record<string, string | undefined>): { search: string | null; page: number } {
  const get = (k: string) => (params instanceof URLSearchParams ? params.get(k) : params[k]) ?? '';
  const search = get('q').trim().slice(0, 254);
  const page = Number(get('page'));
  return { search: search === '' ? null : search, page: Number.isInteger(page) && page >= 1 && page <= 10_000 ? page : 1 };
}

/** The People page's address for a search and page (post, redirect, get back to where the change was made). */
export function rosterHref(q: { search: string | null; page: number }): string {
  const p = new URLSearchParams();
  if (q.search) p.set('q', q.search);
  if (q.page > 1) p.set('page', String(q.page));
  const s = p.toString();
  return `/console/people${s ? `?${s}` : ''}`;
}

/** The roster file's text: the uploaded file, else the pasted CSV; and the columns chosen in the second step. */
export function uploadOf(form: Form): { text: string; columns: { email?: string; team?: string } } {
  const text = form.file && form.file.trim() !== '' ? form.file : (form.csv ?? '');
  const columns: { email?: string; team?: string } = {};
  if (form.emailColumn !== undefined) columns.email = form.emailColumn;
  if (form.teamColumn !== undefined) columns.team = form.teamColumn;
  return { text, columns };
}

/**
 * The people a change of the roster table is for: the row whose Remove was pressed (`removeOne`,
 * a button of the same form), else those ticked (`pick-<id>` checkboxes), in the form's order.
 */
export const chosenOf = (form: Form): string[] =>
  form.removeOne
    ? [form.removeOne]
    : Object.keys(form)
        .filter((k) => k.startsWith('pick-') && form[k] !== '')
        .map((k) => k.slice('pick-'.length));
