/**
 * Every word of the check-in page, in one place, ready for translation: the page (rendered by the
 * server) and its script (bundled at build time, scripts/bundle.mjs) both read them from here.
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
  alreadyIssued:
    'This link was already used to send an answer, or to start one, in another browser or on another device. Each link gives one answer a week, so nothing more can be sent from here. If that was not you, ask the people who run the check-ins for a new link.',
  openedBefore:
    'This link was opened before (perhaps by your mail program checking it, or in another browser), but nothing was sent then. You can answer here.',
  resumed: 'You started an answer in this browser before: it is ready to send below.',
  teamSize: (people: number, joined: number) =>
    `Your team has ${people} people on this week's check-in${joined > 0 ? `; ${joined === 1 ? 'one of them' : `${joined} of them`} joined it in the last four weeks` : ''}.`,
  attachLegend: 'Attach your team to your answer?',
  attachYes: (name: string) => `Attach my team (${name})`,
  attachNo: "Don't attach my team",
  attachNoHint: 'Without your team, your answer counts for the whole organization and shows no team.',
  recentJoinersWhy:
    "Someone joined your team recently, so \u201cDon't attach my team\u201d is chosen: when a team has just changed, the answers of its people are easier to tell apart. You may still attach it.",
  smallOrgKey: (people: number) =>
    `Careful: ${people === 0 ? 'nobody else answers' : `only ${people} ${people === 1 ? 'person answers' : 'people answer'}`} without a team by default, so an answer without a team could be narrowed to fewer than 5 people.`,
  wrongWeek:
    "Stopped: the date on this device is not in this link's week, so the page cannot check that the key it was given is this week's key for everyone. Check the device's date and time, or use the link of this week's mail. Nothing was sent.",
  alreadyAnswered: 'This answer was already recorded. Thank you.',
  keyFull:
    "This week's check-in has taken as many answers as your team has people, so nothing was recorded. If you did not answer this week, tell the people who run the check-ins.",
  failed: 'Something went wrong; nothing was recorded. Reload the page to try again.',
  limited:
    'Too many check-ins came from your network in the last minute (an office that shares one internet address, perhaps). Nothing was recorded. Wait a minute, then try again.',
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
