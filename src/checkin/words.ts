/**
 * Every word of the check-in page, in one place, ready for translation: the page (rendered by the
 * server) and its script (bundled into /checkin/assets/checkin.js) both read them from here.
 */
export const WORDS = {
  lang: 'en',
  title: 'Weekly check-in',
  question: 'How was your week?',
  levels: ['Very bad', 'Bad', 'Okay', 'Good', 'Very good'] as const,
  reasonLegend: 'What weighed most? (optional)',
  reasonNone: 'Rather not say',
  comment: 'Anything to add? (optional, at most 2,000 characters)',
  submit: 'Send my answer',
  kept: 'Kept: your answer, its team and the hour it arrived. Not kept: who you are. Your link only obtains a signed token; your answer is sent with the token alone, and the service cannot tell whose token it was.',
  howItWorks: 'How this works',
  noScript:
    'This page needs JavaScript: your browser makes the anonymous token itself, so that the service never learns which answer is yours. Without JavaScript nothing is sent and nothing is recorded.',
  loading: 'Preparing your anonymous token…',
  team: (name: string | null) =>
    name ? `Team: ${name}` : 'Your answer counts for the whole organization (your team has fewer than 5 people on the roster, so no team is shown).',
  org: (name: string) => `${name} asks:`,
  linkMissing: 'This page opens from the personal link in your check-in email.',
  linkGone: 'This link is not valid or has closed. A new one comes with the next check-in.',
  keyMismatch:
    'Stopped: the key this page was given is not the one published for your team and week. Answering could let the service recognise you, so nothing was sent.',
  alreadyIssued: 'This link was already used to prepare an answer, perhaps in another browser. Finish there; each link gives one answer a week.',
  alreadyAnswered: 'This answer was already recorded. Thank you.',
  failed: 'Something went wrong; nothing was recorded. Reload the page to try again.',
  thanksTitle: 'Thank you',
  thanks: 'Your answer was recorded, without your name.',
  thanksComment: (when: string) =>
    `Your comment can appear to your organization from ${when}, once the week has ended, and only among the comments of at least 5 answers.`,
  aboutTitle: 'How anonymous check-ins work',
  about: [
    'Your email link proves that you may answer this week. Opening it, this page makes a random token in your browser, hides it (blinds it) and asks the service to sign it. The service records only that your link was used this week.',
    'The page then removes the blinding and sends your answer with the signed token, without your link, cookie or name. The service checks the signature and that the token was not used before, and records the answer in your team. It cannot tell whose token it was: it never saw the token before the answer came.',
    'The page checks that the key it was given is the one published for everyone of your team and week, so the service cannot give you a key of your own to recognise you by.',
    'What remains: someone who records the network traffic in front of the service could match when you opened the link with when an answer arrived. Answering later than you open the link makes that harder.',
  ],
} as const;
