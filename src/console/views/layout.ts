import type { FastifyReply } from 'fastify';
import { html, page, type PageOptions, type Safe } from '../html.js';

/** The one way a console page is sent: the layout around the view's body, as HTML, with its status. */
export const sendPage = (reply: FastifyReply, status: number, opts: PageOptions) => reply.code(status).type('text/html; charset=utf-8').send(page(opts));

/**
 * The one date formatter of the pages: a stored instant in UTC, to the minute (or the second),
 * `none` when there is none.
 */
export const when = (iso: string | null | undefined, none = 'never', precision: 'minute' | 'second' = 'minute') =>
  iso ? `${iso.slice(0, precision === 'minute' ? 16 : 19).replace('T', ' ')} UTC` : none;

/** A new secret, shown once: in an element named `label`, with a copy button, and what else the change says. */
export function secretBox(o: { id: string; heading: string; secret: string; label: string; copy: string; extra?: Safe }): Safe {
  return html`<section class="notice ok" role="status" aria-labelledby="${o.id}-heading">
<h2 id="${o.id}-heading">${o.heading}</h2>
<p>Copy it now: it is shown only once.</p>
<code class="secret" id="${o.id}" role="textbox" aria-readonly="true" aria-label="${o.label}">${o.secret}</code>
<button type="button" class="secondary" data-copy="${o.id}" hidden>${o.copy}</button>
${o.extra ?? ''}
</section>`;
}

/** What a viewer sees of an endpoint's URL: its host, not its path or query (which may carry a token). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unreadable URL)';
  }
}
