import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkWebhookUrl, safeLookup, type WebhookUrlRules } from '../webhook-deliveries.js';

/** The most an IdP's document (discovery, keys, token answer) may weigh. */
const MAX_BODY = 1_000_000;
const TIMEOUT_MS = 10_000;

export type SsoNetworkRules = WebhookUrlRules;

/**
 * The fetch the SSO code talks to an IdP with (discovery, keys, token endpoint): the webhooks' SSRF
 * guard (https:// to public addresses, every address of the name judged at connect time; loopback
 * over http only with WEBHOOK_ALLOW_PRIVATE), no redirects followed, a size cap and a timeout. An
 * owner types the issuer URL, so the server must not become their way into the internal network.
 */
export function guardedFetch(rules: SsoNetworkRules): (url: string, init?: RequestInit) => Promise<Response> {
  return async (input, init = {}) => {
    const url = checkWebhookUrl(String(input), rules);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : String(init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS);
    return new Promise<Response>((resolve, reject) => {
      const req = send(url, { method: init.method ?? 'GET', headers, lookup: safeLookup(rules), signal, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) req.destroy(new Error(`the IdP's answer from ${url.host} is larger than ${MAX_BODY} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) for (const x of v) h.append(k, x);
            else if (v !== undefined) h.set(k, v);
          }
          const status = res.statusCode ?? 502;
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: h }));
        });
        res.on('error', reject);
      });
      req.once('error', reject);
      req.end(body);
    });
  };
}
