/**
 * When a week's link and key serve, in hours around its ISO week (UTC): shared by the service
 * (src/domain/checkins/week.ts) and the check-in page's script, which checks the key's week
 * against the device's own clock. No imports: the page's bundle takes this file as it is.
 */

/** A link and its token serve through their week and these hours after it; an answer in them belongs to the link's week. */
export const GRACE_HOURS = 72;

/** How long before its ISO week a round may start: a zone ahead of UTC (at most 14 hours) starts Monday's round on Sunday. */
export const EARLY_START_HOURS = 24;
