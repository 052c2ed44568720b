import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../domain/database.js';
import { getCheckinSettings } from '../../domain/checkins/settings.js';
import { speakerFor, type Speaker } from '../words.js';

/**
 * The speaker of a member's page: the language they chose on their Account page (members.language),
 * else the one their browser asks for (Accept-Language), and the organization's check-in time zone,
 * the zone its people live by (UTC when it has none).
 */
export async function speakerOf(db: Queryable, request: FastifyRequest): Promise<Speaker> {
  const settings = await getCheckinSettings(db, request.member.orgId);
  return speakerFor(request.headers['accept-language'], settings.timeZone, request.member.member.language);
}
