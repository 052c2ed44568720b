import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import type { Translate } from '../../i18n/index.js';
import { html, page, type PageOptions, type Safe } from '../html.js';
import { PLAIN, type Speaker } from '../words.js';

/** The one way a console page is sent: the layout around the view's body, as HTML, with its status. */
export const sendPage = (reply: FastifyReply, status: number, opts: PageOptions) => reply.code(status).type('text/html; charset=utf-8').send(page(opts));

/**
 * A new secret, shown once: in an element named `label`, with a copy button, and what else the
 * change says; its words in the reader's language (`heading`, `label` and `copy` are the caller's).
 */
export function secretBox(o: { id: string; heading: string; secret: string; label: string; copy: string; extra?: Safe }, sp: Speaker = PLAIN): Safe {
  return html`<section class="notice ok" role="status" aria-labelledby="${o.id}-heading">
<h2 id="${o.id}-heading">${o.heading}</h2>
<p>${sp.t('console.layout.secretShownOnce')}</p>
<code class="secret" id="${o.id}" role="textbox" aria-readonly="true" aria-label="${o.label}">${o.secret}</code>
<button type="button" class="secondary" data-copy="${o.id}"${copyWords(sp)} hidden>${o.copy}</button>
${o.extra ?? ''}
</section>`;
}

/** What a viewer sees of an endpoint's URL: its host, not its path or query (which may carry a token). */
export function hostOf(url: string, t: Translate = PLAIN.t): string {
  try {
    return new URL(url).host;
  } catch {
    return t('console.layout.unreadableUrl');
  }
}

/** A notice of what was done (`ok`) or refused (`error`), its words already markup (a message of `sp.rich`). */
export const saidNotice = (said: Safe, kind: 'error' | 'ok' = 'ok') =>
  html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${said}</p>`;

type Render = (request: FastifyRequest, reply: FastifyReply, status: number, message?: Safe) => Promise<unknown>;
type Outcome<W> = (request: FastifyRequest, reply: FastifyReply, work: () => Promise<W>) => Promise<unknown>;

/** A domain refusal on its way out of changeOutcome's work, already in the reader's words. */
class Refusal {
  constructor(
    readonly status: number,
    readonly said: Safe,
  ) {}
}

/**
 * A change's outcome (changeOutcome's) whose refusals are said in the reader's language: `words`
 * turns the domain's refusal (its code and details) into a catalogue message; the page is sent
 * again with it and the refusal's status, as changeOutcome does with the English message.
 */
export function refusalsInWords<W>(outcome: Outcome<W>, render: Render, words: (err: ApiError, request: FastifyRequest) => Promise<Safe>): Outcome<W> {
  return async (request, reply, work) => {
    try {
      return await outcome(request, reply, async () => {
        try {
          return await work();
        } catch (err) {
          if (err instanceof ApiError && err.statusCode < 500) throw new Refusal(err.statusCode, saidNotice(await words(err, request), 'error'));
          throw err;
        }
      });
    } catch (err) {
      if (err instanceof Refusal) return render(request, reply, err.status, err.said);
      throw err;
    }
  };
}

/** What a copy button says once it has copied (or, where the browser cannot, selected) its text: the script reads these. */
export const copyWords = (sp: Speaker) => html` data-copied="${sp.t('console.copy.copied')}" data-selected="${sp.t('console.copy.selected')}"`;
