import type { FastifyInstance } from 'fastify';
import { RSABSSA } from '@cloudflare/blindrsa-ts';
import { expect } from 'vitest';

/** What the check-in page's script does (src/checkin/client/checkin.ts), in Node, through inject. */
export const linkToken = (mail: string) => /\/checkin\/o\/[^#\s]+#([A-Za-z0-9_-]+)/.exec(mail)?.[1];

export interface ClientToken {
  keyId: string;
  message: string;
  signature: string;
  // biome-ignore lint/suspicious/noExplicitAny: the open endpoint's answer, read by each test as it needs
  opened: Record<string, any>;
}

export async function openAndIssue(app: FastifyInstance, orgId: string, link: string): Promise<ClientToken> {
  const opened = await app.inject({ method: 'POST', url: `/checkin/o/${orgId}/open`, payload: { token: link } });
  expect(opened.statusCode, opened.body).toBe(200);
  const o = opened.json() as { keyId: string; publicKey: string; week: string; teamId: string | null };
  const published = (await app.inject({ method: 'GET', url: `/checkin/keys/${orgId}` })).json() as {
    keys: { id: string; week: string; teamId: string | null; publicKey: string }[];
  };
  const mine = published.keys.filter((k) => k.week === o.week && k.teamId === o.teamId);
  expect(mine.map((k) => [k.id, k.publicKey])).toEqual([[o.keyId, o.publicKey]]);
  const suite = RSABSSA.SHA384.PSS.Randomized();
  const pk = await crypto.subtle.importKey('spki', new Uint8Array(Buffer.from(o.publicKey, 'base64url')), { name: 'RSA-PSS', hash: 'SHA-384' }, true, [
    'verify',
  ]);
  const prepared = suite.prepare(crypto.getRandomValues(new Uint8Array(32)));
  const { blindedMsg, inv } = await suite.blind(pk, prepared);
  const issued = await app.inject({
    method: 'POST',
    url: `/checkin/o/${orgId}/issue`,
    payload: { token: link, blindedMessage: Buffer.from(blindedMsg).toString('base64url') },
  });
  expect(issued.statusCode, issued.body).toBe(200);
  const sig = await suite.finalize(pk, prepared, Buffer.from(issued.json().blindSignature, 'base64url'), inv);
  return { keyId: o.keyId, message: Buffer.from(prepared).toString('base64url'), signature: Buffer.from(sig).toString('base64url'), opened: opened.json() };
}

export function answer(
  app: FastifyInstance,
  orgId: string,
  t: ClientToken,
  a: { level: number; reason?: string | null; comment?: string | null; team?: boolean },
) {
  return app.inject({ method: 'POST', url: '/checkin/answer', payload: { orgId, keyId: t.keyId, message: t.message, signature: t.signature, ...a } });
}
