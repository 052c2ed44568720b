import { ApiError } from '../../../contract/errors.js';
import type { MessageKey } from '../../../i18n/index.js';
import type { Speaker } from '../../words.js';

/**
 * The refusals of the check-ins' and the roster's domain calls, in the reader's words (issue 57):
 * chosen by the error's code and what its English message names (the domain has one code for
 * every refusal of a form). A refusal this table does not know keeps its English message.
 */
const KNOWN: readonly { code: ApiError['code']; match: RegExp; key: MessageKey; values?: (m: RegExpExecArray) => Record<string, string | number> }[] = [
  { code: 'not_found', match: /^Respondent not found\.$/, key: 'console.people.errGone' },
  { code: 'invalid_request', match: /^This person is kept by the organization's identity provider \(SCIM\)/, key: 'console.people.errScim' },
  { code: 'invalid_request', match: /^'email' must be an email address\.$/, key: 'console.people.errEmail' },
  { code: 'invalid_request', match: /^'email' is already on the roster\.$/, key: 'console.people.errTaken' },
  { code: 'invalid_request', match: /^'team' must be at most 80 characters\.$/, key: 'console.people.errTeamLong' },
  { code: 'invalid_request', match: /^'team' must not contain NUL\.$/, key: 'console.people.errTeamNul' },
  { code: 'invalid_request', match: /^Choose at least one person\.$/, key: 'console.people.errChooseOne' },
  { code: 'invalid_request', match: /^Choose to move or to remove the chosen people\.$/, key: 'console.people.errChooseAction' },
  {
    code: 'invalid_request',
    match: /^At most (\d+) people can be changed at once\.$/,
    key: 'console.people.errTooMany',
    values: (m) => ({ max: Number(m[1]) }),
  },
  { code: 'invalid_request', match: /^'language' must be one of the languages offered, such as/, key: 'console.checkins.errLanguage' },
  { code: 'invalid_request', match: /^'language' must be one of the languages offered \(/, key: 'console.people.errLanguage' },
  { code: 'invalid_request', match: /^'timeZone' must be an IANA time zone/, key: 'console.checkins.errZone' },
  {
    code: 'invalid_request',
    match: /^'(weekday|hour|reminderWeekday)' must be an integer from (\d+) to (\d+)\.$/,
    key: 'console.checkins.errNumber',
    values: (m) => ({ field: m[1]!, min: Number(m[2]), max: Number(m[3]) }),
  },
  { code: 'invalid_request', match: /^'reminderWeekday' must come after 'weekday'/, key: 'console.checkins.errReminder' },
  {
    code: 'invalid_request',
    match: /^'(reasons|flagWords)(?:\[\d+\])?' must be (?:a list of at most (\d+) entries|1-(\d+) characters)\.$/,
    key: 'console.checkins.errWords',
    values: (m) => ({ field: m[1]!, items: m[1] === 'reasons' ? 20 : 500, length: 60 }),
  },
  {
    code: 'invalid_transition',
    match: /^This server sends no mail \(SMTP_URL is not set\), so it cannot send a test mail\.$/,
    key: 'console.checkins.errNoSmtpTest',
  },
  { code: 'invalid_transition', match: /^This server sends no mail \(SMTP_URL is not set\): download/, key: 'console.checkins.errNoSmtpSend' },
  {
    code: 'invalid_transition',
    match: /^This week's round started already, at (\S+): it is not started twice\.$/,
    key: 'console.checkins.errStartedAt',
    values: (m) => ({ at: m[1]! }),
  },
  { code: 'invalid_transition', match: /^This week's round started already: it is not started twice\.$/, key: 'console.checkins.errStarted' },
  { code: 'invalid_transition', match: /^The roster is empty: add people before sending a round\.$/, key: 'console.checkins.errEmpty' },
  { code: 'invalid_transition', match: /^This week's round has not started yet/, key: 'console.people.errNotStarted' },
  { code: 'invalid_transition', match: /^This person is not on this week's round/, key: 'console.people.errNotOnRound' },
  {
    code: 'invalid_transition',
    match: /^This week's links were handed out already\. A new file makes a new link for each of the (\d+) people/,
    key: 'console.checkins.errHandedOut',
    values: (m) => ({ people: Number(m[1]) }),
  },
  { code: 'invalid_transition', match: /^This server mails the check-in links \(SMTP_URL is set\)/, key: 'console.checkins.errMailsNoFile' },
];

/** The error, its message in the reader's words when this table knows it. */
export function spoken(err: ApiError, sp: Speaker): ApiError {
  for (const k of KNOWN) {
    if (k.code !== err.code) continue;
    const m = k.match.exec(err.message);
    if (m) return new ApiError(err.code, sp.t(k.key, k.values?.(m)), err.headers);
  }
  return err;
}

/** Runs `work`, its refusals in the reader's words. */
export async function inWords<T>(sp: Speaker, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) throw spoken(err, sp);
    throw err;
  }
}
