import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../domain/database.js';
import { getZoneAndLanguage } from '../../domain/checkins/settings.js';
import type { Locale } from '../../i18n/index.js';
import { speakerFor, type Speaker } from '../words.js';

/**
 * The speaker of a member's page: the language they chose on their Account page (members.language),
 * else the one their browser asks for (Accept-Language), and the organization's check-in time zone,
 * the zone its people live by (UTC when it has none).
 */
export async function speakerOf(db: Queryable, request: FastifyRequest): Promise<Speaker> {
  return (await speakerAndLanguageOf(db, request)).speaker;
}

/** The same, with the organization's default language for its people, read with it (the People and Check-ins pages show it). */
export async function speakerAndLanguageOf(db: Queryable, request: FastifyRequest): Promise<{ speaker: Speaker; language: Locale }> {
  const settings = await getZoneAndLanguage(db, request.member.orgId);
  return { speaker: speakerFor(request.headers['accept-language'], settings.timeZone, request.member.member.language), language: settings.language };
}
