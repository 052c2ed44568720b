import { ApiError } from '../../../contract/errors.js';
import { checkKeyName, checkKeyScope, type RollDelay } from '../../../domain/keys.js';
import { html, type Safe } from '../../html.js';
import type { Form } from '../../plugins/index.js';
import type { Speaker } from '../../words.js';

const BAD_EXPIRY = 'The expiry must be a date (YYYY-MM-DD).';

/** The form's optional expiry: a calendar date (midnight UTC starts it). */
function expiryOf(text: string | undefined): string | null {
  if (!text) return null;
  if (!/^\d{4}-\d\d-\d\d$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00.000Z`))) throw new ApiError('invalid_request', BAD_EXPIRY);
  return `${text}T00:00:00.000Z`;
}

/**
 * The create form as createOrgKey's input. The scope and the name are checked by the domain's own
 * rules (createOrgKey applies them too), in the order the page reports them; the date is the form's.
 */
export function newKeyOf(form: Form) {
  const scope = checkKeyScope(form.scope ?? '');
  const name = checkKeyName((form.name ?? '').trim());
  return { name, scope, expiresAt: expiryOf(form.expires) };
}

/**
 * How long the old key of a roll stays valid unless the form says otherwise: a day of overlap, so
 * that the programs using it can move to the new one (rolling "now" cut them off at once).
 */
export const DEFAULT_ROLL_DELAY: RollDelay = '24h';

/** The roll form: how long the old key stays valid (the domain refuses an unknown delay). */
export const rollDelayOf = (form: Form) => (form.expiresIn === undefined || form.expiresIn === '' ? DEFAULT_ROLL_DELAY : (form.expiresIn as RollDelay));

/**
 * A refusal of the keys page in the reader's words, chosen by the domain's code and which rule it
 * names; a refusal this page does not know keeps the domain's English message.
 */
export function keyRefusal(err: ApiError, sp: Speaker): Safe {
  const { t } = sp;
  const m = err.message;
  if (err.code === 'not_found') return html`${t('console.keys.notFound')}`;
  if (err.code === 'invalid_request') {
    if (m === BAD_EXPIRY) return html`${t('console.keys.badExpiry', { example: '2027-01-31' })}`;
    if (m.startsWith('The name must be')) return html`${t('console.keys.badName', { max: 128 })}`;
    if (m.startsWith('The scope must be')) return html`${t('console.keys.badScope')}`;
    if (m.includes("'expiresAt' must be in the future")) return html`${t('console.keys.pastExpiry')}`;
    if (m.startsWith("The old key's expiry must be")) return html`${t('console.keys.badDelay')}`;
  }
  return html`${m}`;
}
