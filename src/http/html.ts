import type { FastifyReply } from 'fastify';
/**
 * HTML for every page a person reads (the console, the check-in page), escaped by construction: `html` escapes every interpolated value unless
 * it is itself the output of `html` (a `Safe`). Comments, names, titles and emails are written by
 * strangers; no page builds markup any other way.
 */
export class Safe {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };
const SPECIAL = /[&<>"'`]/;
/** Most text has nothing to escape (dates, numbers, most names): a test is cheaper than a replace. */
export const escapeHtml = (s: string) => (SPECIAL.test(s) ? s.replace(/[&<>"'`]/g, (c) => ESCAPES[c]) : s);

type Value = Safe | string | number | boolean | null | undefined | Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Safe) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Safe {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Safe(out);
}

/**
 * The Content-Security-Policy of every page a person reads: nothing inline, nothing from another
 * origin, no framing.
 */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/**
 * The headers of every page a person reads (the console, the check-in page), on top of the base's
 * nosniff and no-store: the policy above, no referrer, no framing, no window or resource shared
 * with another origin, and, when the service is reached over https (`PUBLIC_BASE_URL`), HSTS.
 */
export function setPageHeaders(reply: FastifyReply, opts: { https: boolean }): void {
  reply.header('content-security-policy', PAGE_CSP);
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cross-origin-resource-policy', 'same-origin');
  if (opts.https) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
}
