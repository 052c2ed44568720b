import type { ConsoleSession } from '../../domain/sessions.js';
import type { NavItem, PageOptions } from '../html.js';

/**
 * The navigation a member sees: the pages of their role. Every page and change is also guarded on
 * the server (plugins/guard.ts, by each route's roles); hiding a link is never the protection.
 */
export function navItems(session: Pick<ConsoleSession, 'member'>): NavItem[] {
  // A manager: their teams' pages, and their own account (section 11 amended, *Managers*).
  if (session.member.role === 'manager') {
    return [
      { href: '/console/overview', label: 'Overview' },
      { href: '/console/alerts', label: 'Alerts' },
      { href: '/console/actions', label: 'Actions' },
      { href: '/console/comments', label: 'Comments' },
      { href: '/console/account', label: 'Account' },
      { href: '/console/sessions', label: 'Sessions' },
    ];
  }
  const items: NavItem[] = [
    { href: '/console/overview', label: 'Overview' },
    { href: '/console/alerts', label: 'Alerts' },
    { href: '/console/actions', label: 'Actions' },
    { href: '/console/comments', label: 'Comments' },
    { href: '/console/keys', label: 'API keys' },
    { href: '/console/webhooks', label: 'Webhooks' },
  ];
  if (session.member.role !== 'viewer') items.push({ href: '/console/people', label: 'People' });
  if (session.member.role === 'owner' || session.member.role === 'admin') items.push({ href: '/console/provisioning', label: 'Provisioning' });
  if (['owner', 'admin', 'viewer'].includes(session.member.role)) items.push({ href: '/console/checkins', label: 'Check-ins' });
  if (session.member.role === 'owner') items.push({ href: '/console/members', label: 'Members' });
  if (session.member.role === 'owner') items.push({ href: '/console/sso', label: 'Single sign-on' });
  items.push({ href: '/console/audit', label: 'Audit log' });
  items.push({ href: '/console/account', label: 'Account' });
  items.push({ href: '/console/sessions', label: 'Sessions' });
  return items;
}

export function navFor(session: Pick<ConsoleSession, 'member' | 'orgName' | 'csrfToken'>, current: string): NonNullable<PageOptions['nav']> {
  return { items: navItems(session), current, email: session.member.email, orgName: session.orgName, csrf: session.csrfToken };
}
