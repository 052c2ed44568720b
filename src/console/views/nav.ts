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
      { href: '/console/overview', label: 'console.nav.overview' },
      { href: '/console/alerts', label: 'console.nav.alerts' },
      { href: '/console/actions', label: 'console.nav.actions' },
      { href: '/console/comments', label: 'console.nav.comments' },
      { href: '/console/account', label: 'console.nav.account' },
      { href: '/console/sessions', label: 'console.nav.sessions' },
    ];
  }
  const items: NavItem[] = [
    { href: '/console/overview', label: 'console.nav.overview' },
    { href: '/console/alerts', label: 'console.nav.alerts' },
    { href: '/console/actions', label: 'console.nav.actions' },
    { href: '/console/comments', label: 'console.nav.comments' },
    { href: '/console/keys', label: 'console.nav.keys' },
    { href: '/console/webhooks', label: 'console.nav.webhooks' },
  ];
  if (session.member.role !== 'viewer') items.push({ href: '/console/people', label: 'console.nav.people' });
  if (session.member.role === 'owner' || session.member.role === 'admin') items.push({ href: '/console/provisioning', label: 'console.nav.provisioning' });
  if (['owner', 'admin', 'viewer'].includes(session.member.role)) items.push({ href: '/console/checkins', label: 'console.nav.checkins' });
  if (session.member.role === 'owner') items.push({ href: '/console/members', label: 'console.nav.members' });
  if (session.member.role === 'owner') items.push({ href: '/console/sso', label: 'console.nav.sso' });
  items.push({ href: '/console/audit', label: 'console.nav.audit' });
  items.push({ href: '/console/account', label: 'console.nav.account' });
  items.push({ href: '/console/sessions', label: 'console.nav.sessions' });
  return items;
}

export function navFor(session: Pick<ConsoleSession, 'member' | 'orgName' | 'csrfToken'>, current: string): NonNullable<PageOptions['nav']> {
  return { items: navItems(session), current, email: session.member.email, orgName: session.orgName, csrf: session.csrfToken };
}
