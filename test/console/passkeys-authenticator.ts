import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software authenticator for the tests that drive passkeys without a browser: P-256 (ES256)
 * credentials, discoverable and verifying their user, attestation `none`, a signature counter per
 * credential that a test may set (a clone's counter goes back). It answers the options the server
 * renders into a page exactly as a browser's WebAuthn API would, as JSON (what the form posts).
 * test/console/passkeys-browser.test.ts does the same with Chromium's own virtual authenticator.
 */
interface Credential {
  id: Buffer;
  key: KeyObject;
  userHandle: Buffer;
  counter: number;
}

const b64 = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  constructor(
    readonly origin: string,
    readonly rpId = new URL(origin).hostname,
  ) {}

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin = this.origin) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() for the options (JSON text or object); the answer as the form posts it. */
  register(options: string | Record<string, unknown>, opts: { origin?: string } = {}): string {
    const o = (typeof options === 'string' ? JSON.parse(options) : options) as { challenge: string; user: { id: string }; rp: { id: string } };
    const id = randomBytes(32);
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y, 'base64url'))],
    ]);
    const counter = Buffer.alloc(4);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    // Flags: user present (0x01), user verified (0x04), attested credential data (0x40).
    const authData = Buffer.concat([sha256(o.rp.id), Buffer.from([0x45]), counter, Buffer.alloc(16), idLength, id, Buffer.from(isoCBOR.encode(cose))]);
    const attestation = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    this.credentials.push({ id, key: privateKey, userHandle: Buffer.from(o.user.id, 'base64url'), counter: 0 });
    return JSON.stringify({
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(this.clientData('webauthn.create', o.challenge, opts.origin)),
        attestationObject: b64(attestation),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }

  /**
   * navigator.credentials.get(): the first allowed credential (or `credential`, or else the last
   * made), its counter one up (or `counter` as given: a clone's).
   */
  authenticate(options: string | Record<string, unknown>, opts: { credential?: Credential; counter?: number; origin?: string } = {}): string {
    const o = (typeof options === 'string' ? JSON.parse(options) : options) as { challenge: string; rpId: string; allowCredentials?: { id: string }[] };
    const allowed = o.allowCredentials?.map((c) => c.id) ?? [];
    const c =
      opts.credential ?? (allowed.length > 0 ? this.credentials.find((x) => allowed.includes(b64(x.id))) : this.credentials[this.credentials.length - 1]);
    if (!c) throw new Error('no credential of this authenticator is allowed');
    c.counter = opts.counter ?? c.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(c.counter);
    const authData = Buffer.concat([sha256(o.rpId), Buffer.from([0x05]), counter]);
    const clientData = this.clientData('webauthn.get', o.challenge, opts.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), c.key);
    return JSON.stringify({
      id: b64(c.id),
      rawId: b64(c.id),
      type: 'public-key',
      response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), userHandle: b64(c.userHandle) },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }
}

/** The WebAuthn options a page renders into its passkey form (`data-options`), after the form's action. */
export function optionsOn(page: string, action: string): string {
  const form = new RegExp(`<form method="post" action="${action.replace(/[/]/g, '\\/')}"[^>]*data-options="([^"]*)"`).exec(page);
  if (!form) throw new Error(`no passkey form posting to ${action} on the page`);
  return form[1]
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');
}
