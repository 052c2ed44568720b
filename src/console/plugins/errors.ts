import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';
import { toApiError, withoutValues } from '../../http/plugins/index.js';
import type { MessageKey } from '../../i18n/index.js';
import { INVITATION_UNUSABLE } from '../../domain/members.js';
import {
  PASSKEY_HELD_USE_YOURS,
  PASSKEY_LAST_REQUIRED,
  PASSKEY_NAME_MAX,
  PASSKEY_PASSWORD_REFUSED,
  PASSKEY_REFUSED,
  PASSKEY_REGISTRATION_REFUSED,
  PASSKEY_REQUIREMENT_NEEDS_OWN,
  PASSKEYS_NEED_A_NAME,
} from '../../domain/passkeys.js';
import { PASSWORD_REFUSED } from '../../domain/passwords.js';
import { ACCEPTANCE_LIMITED, BREAK_GLASS_NEEDS_PASSKEY, CHOOSE_ORGANIZATION, SIGN_IN_REFUSED } from '../../domain/sessions.js';
import { SSO_NO_ROLE, SSO_NOT_SET_UP, SSO_REFUSED, SSO_WRONG_DOMAIN } from '../../domain/sso/oidc.js';
import { SSO_SAML_NOT_SET_UP } from '../../domain/sso/saml-sign-in.js';
import { DOMAIN_TAKEN, SSO_REQUIRED_FOR_PASSWORD, TXT_NOT_FOUND } from '../../domain/sso/settings.js';
import { PASSKEY_REQUIRED_NOT_CODE, REPLACE_FACTOR_REFUSED, TWO_FACTOR_REFUSED } from '../../domain/totp.js';
import { html, notice } from '../html.js';
import { sendPage } from '../views/layout.js';
import { speakerFor, type Speaker } from '../words.js';
import { EntryRefused } from './forms.js';

/** The speaker of a page no member's settings shape (signing in, an error page): the browser's Accept-Language. */
export const readerOf = (request: FastifyRequest): Speaker => speakerFor(request.headers['accept-language']);

/** A page that explains a refusal, with the status it deserves, in the words of `sp` (else the request's reader). */
export function refusalPage(reply: FastifyReply, status: number, title: string, message: string, sp: Speaker = readerOf(reply.request)) {
  return sendPage(reply, status, {
    title,
    speaker: sp,
    body: html`<h1>${title}</h1>${notice(message)}<p><a href="/console">${sp.t('console.errors.back')}</a></p>`,
  });
}

/** The domain's refusals the console's pages show, by their English message: each one's message in the catalogue. */
const KNOWN: ReadonlyMap<string, MessageKey> = new Map<string, MessageKey>([
  [SIGN_IN_REFUSED, 'console.refusal.signIn'],
  [ACCEPTANCE_LIMITED, 'console.refusal.acceptanceLimited'],
  [INVITATION_UNUSABLE, 'console.refusal.invitationUnusable'],
  [BREAK_GLASS_NEEDS_PASSKEY, 'console.refusal.breakGlassNeedsPasskey'],
  [CHOOSE_ORGANIZATION, 'console.refusal.chooseOrganization'],
  [SSO_REQUIRED_FOR_PASSWORD, 'console.refusal.ssoRequired'],
  [PASSKEY_REQUIRED_NOT_CODE, 'console.refusal.passkeyNotCode'],
  [REPLACE_FACTOR_REFUSED, 'console.refusal.replaceFactor'],
  [TWO_FACTOR_REFUSED, 'console.refusal.twoFactor'],
  ['The code does not match; enter the six digits your authenticator app shows now.', 'console.refusal.codeMismatch'],
  [PASSWORD_REFUSED, 'console.refusal.password'],
  [PASSKEY_REFUSED, 'console.refusal.passkey'],
  [PASSKEY_PASSWORD_REFUSED, 'console.refusal.passkeyPassword'],
  [PASSKEY_REGISTRATION_REFUSED, 'console.refusal.passkeyRegistration'],
  [PASSKEY_LAST_REQUIRED, 'console.refusal.passkeyLast'],
  [PASSKEY_REQUIREMENT_NEEDS_OWN, 'console.refusal.passkeyNeedsOwn'],
  [PASSKEY_HELD_USE_YOURS, 'console.refusal.passkeyUseYours'],
  [PASSKEYS_NEED_A_NAME, 'console.refusal.passkeysNeedName'],
  ["Give the passkey a name (what you will recognise it by: 'Work laptop').", 'console.refusal.passkeyNameEmpty'],
  [SSO_REFUSED, 'console.refusal.sso'],
  [SSO_NOT_SET_UP, 'console.refusal.ssoNotSetUp'],
  [SSO_SAML_NOT_SET_UP, 'console.refusal.samlNotSetUp'],
  [SSO_NO_ROLE, 'console.refusal.ssoNoRole'],
  [SSO_WRONG_DOMAIN, 'console.refusal.ssoWrongDomain'],
  ['Connect an identity provider before requiring single sign-on.', 'console.refusal.ssoConnectFirst'],
  ['Verify at least one domain before requiring single sign-on: without one, nobody could reach the identity provider.', 'console.refusal.ssoVerifyFirst'],
  ['The break-glass member must be an owner of this organization.', 'console.refusal.breakGlassOwner'],
  ["The domain must be a name like 'example.com'.", 'console.refusal.domainName'],
  ['An organization has at most 50 domains.', 'console.refusal.domainsMax'],
  ["This is not one of this organization's domains.", 'console.refusal.domainUnknown'],
  [TXT_NOT_FOUND, 'console.refusal.txtNotFound'],
  [DOMAIN_TAKEN, 'console.refusal.domainTaken'],
  ['The longest session must be a whole number of hours from 1 to 168.', 'console.refusal.sessionHours'],
  ['The client secret is required (the IdP shows it when the application is registered).', 'console.refusal.clientSecret'],
  ['This organization has no single sign-on set up.', 'console.refusal.ssoNone'],
  ['give the IdP metadata either pasted (metadataXml) or by its URL (metadataUrl), one of the two', 'console.refusal.samlOneOfTwo'],
]);

/** The fields of the OpenID Connect form a refusal names, as the domain names them. */
const SSO_FIELDS: Record<string, string> = {
  'The issuer URL': 'issuer',
  'The client id': 'clientId',
  'The client secret': 'clientSecret',
  'The groups claim': 'groupsClaim',
};

/** Refusals with a value in them: the pattern of the English message, and the catalogue's message of what it caught. */
const PATTERNS: ReadonlyArray<[RegExp, (sp: Speaker, m: RegExpExecArray) => string]> = [
  [/^The password must be at least (\d+) characters long\.$/, (sp, m) => sp.t('console.refusal.passwordShort', { min: Number(m[1]) })],
  [/^The new password must be at least (\d+) characters long\.$/, (sp, m) => sp.t('console.refusal.passwordShort', { min: Number(m[1]) })],
  [/^The password must be at most (\d+) characters long\.$/, (sp, m) => sp.t('console.refusal.passwordLong', { max: Number(m[1]) })],
  [/^A passkey's name must be at most \d+ characters long\.$/, (sp) => sp.t('console.refusal.passkeyNameLong', { max: PASSKEY_NAME_MAX })],
  [/^No passkey "(.*)" of this member\.$/, (sp) => sp.t('console.refusal.passkeyNotFound')],
  [/^(.+) is already one of this organization's domains\.$/, (sp, m) => sp.t('console.refusal.domainAlready', { domain: m[1] })],
  [/^(.+) is not one of this organization's domains\.$/, (sp, m) => sp.t('console.refusal.domainNotOurs', { domain: m[1] })],
  [/^Line (\d+) of the group mappings needs the form 'group = role'\.$/, (sp, m) => sp.t('console.refusal.groupLine', { line: Number(m[1]) })],
  // The People page's upload (src/console/pages/people/multipart.ts), refused before its handler runs.
  [/^The upload field '(.*)' holds a control character/, (sp, m) => sp.t('console.errors.controlField', { entry: m[1] })],
  [/^The upload gives the field '(.*)' more than once\.$/, (sp, m) => sp.t('console.errors.fieldTwice', { entry: m[1] })],
  [/^The upload has a field's name with a control character\.$/, (sp) => sp.t('console.errors.controlFieldName')],
  [
    /^The upload (?:has no multipart boundary|is not multipart\/form-data|is malformed|is cut short|has a part without a name)\.$/,
    (sp) => sp.t('console.errors.uploadUnreadable'),
  ],
  // The detail is the network's or the IdP's own answer: kept as it came.
  [
    /^The identity provider at (\S+) did not answer OpenID Connect discovery: ([\s\S]*)$/,
    (sp, m) => sp.t('console.refusal.ssoDiscovery', { issuer: m[1], detail: m[2] }),
  ],
  [
    /^(The issuer URL|The client id|The client secret|The groups claim) must be text of 1 to (\d+) characters\.$/,
    (sp, m) => sp.t('console.refusal.ssoField', { field: SSO_FIELDS[m[1]], max: Number(m[2]) }),
  ],
];

/**
 * A refusal of the domain (or of the console's own checks) in the reader's words: the catalogue's
 * message its code and English message name; for one this console does not know (a new refusal, or
 * the detail of an identity provider's answer), the English message itself, introduced in the
 * reader's language as the service's explanation in English.
 */
export function refusalWords(sp: Speaker, err: ApiError): string {
  if (err instanceof EntryRefused) {
    const entry = err.entry;
    switch (err.fault) {
      case 'address':
        return sp.t('console.errors.controlAddress');
      case 'queryName':
        return sp.t('console.errors.controlQueryName');
      case 'query':
        return sp.t('console.errors.controlQuery', { entry });
      case 'fieldName':
        return sp.t('console.errors.controlFieldName');
      case 'field':
        return sp.t('console.errors.controlField', { entry });
      case 'fieldTwice':
        return sp.t('console.errors.fieldTwice', { entry });
      case 'queryTwice':
        return sp.t('console.errors.queryTwice', { entry });
    }
  }
  const key = KNOWN.get(err.message);
  if (key) return sp.t(key);
  for (const [pattern, say] of PATTERNS) {
    const m = pattern.exec(err.message);
    if (m) return say(sp, m);
  }
  if (err.code === 'rate_limited') return sp.t('console.errors.tooManyText');
  // A refusal this console has no words for (a new one, or an identity provider's detail): its
  // English message, said to be English in the reader's language.
  return sp.lang === 'en' ? err.message : sp.t('console.errors.refusedInEnglish', { detail: err.message });
}

/**
 * Runs a change's work, and gives a refusal it throws in the reader's words (the same code, status
 * and headers): what changeOutcome then shows on the page.
 */
export async function inWords<T>(sp: Speaker, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.statusCode < 500) {
      const said = refusalWords(sp, err);
      if (said !== err.message) throw new ApiError(err.code, said, err.headers);
    }
    throw err;
  }
}

/**
 * Every error of a console request, and every unknown console address, answered as a page. Our
 * own refusals and Fastify's (below 500) say what they say; any other failure is read as the API
 * reads it (toApiError: a value the database cannot store is 400, an unavailable database 503),
 * and a 5xx is logged without the values the request carried (withoutValues).
 */
export function registerConsoleErrors(scope: FastifyInstance) {
  scope.setErrorHandler(async (err: Error & { statusCode?: number }, request, reply) => {
    const own = err instanceof ApiError || (err.statusCode !== undefined && err.statusCode < 500);
    const read = own ? null : toApiError(err as Parameters<typeof toApiError>[0]);
    const status = read ? read.statusCode : err.statusCode!;
    if (status >= 500) request.log.error({ err: withoutValues(err) }, 'console request failed');
    if (read) reply.headers(read.headers);
    const sp = readerOf(request);
    const { t } = sp;
    if (status >= 500) return refusalPage(reply, status, t('console.errors.failedTitle'), t('console.errors.failedText'), sp);
    if (status === 429) {
      if (err instanceof ApiError) reply.headers(err.headers);
      return refusalPage(reply, status, t('console.errors.tooManyTitle'), t('console.errors.tooManyText'), sp);
    }
    const refusal = read ?? (err instanceof ApiError ? err : null);
    return refusalPage(reply, status, t('console.errors.refusedTitle'), refusal ? refusalWords(sp, refusal) : fastifyWords(sp, status, err.message), sp);
  });
  scope.setNotFoundHandler(async (request, reply) => {
    const sp = readerOf(request);
    return refusalPage(reply, 404, sp.t('console.errors.notFoundTitle'), sp.t('console.errors.notFoundText'), sp);
  });
}

/** A refusal of Fastify's own (a body too large, a type the console does not read): by its status; English only for one not named here. */
function fastifyWords(sp: Speaker, status: number, message: string): string {
  if (status === 413) return sp.t('console.errors.tooLarge');
  if (status === 415) return sp.t('console.errors.notAForm');
  if (status === 400) return sp.t('console.errors.unreadable');
  return message;
}
