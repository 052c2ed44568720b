import { resolve } from 'node:path';
import type { Config } from '../config.js';

/** Characters a shell takes as they are in an unquoted word. */
const PLAIN = /^[A-Za-z0-9_./:@%+=,-]+$/;

/** A word as a POSIX shell reads it back unchanged: as it is when plain, else in single quotes. */
export function shellWord(text: string): string {
  return PLAIN.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A postgres:// URL as it may be printed: its password, when it has one, as `***`. */
export function maskedUrl(text: string): string {
  try {
    const u = new URL(text);
    if (!u.password) return text;
    u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * The command a printed hint names, for the database this process uses (issue 54, item 1): a hint
 * run as printed, from the clone, must act on the same database. `npx climate-pulse` (what works
 * from a clone after `npm install`), preceded by the variable that chose the database when it is not
 * the default: `DATABASE_URL=…` (its password shown as `***`) on PostgreSQL, `DATA_DIR=…` (the
 * absolute path) for an embedded directory other than `./data` of the current directory.
 */
export function cliCommand(config: Pick<Config, 'databaseUrl' | 'dataDir'>, cwd = process.cwd()): string {
  if (config.databaseUrl) return `DATABASE_URL=${shellWord(maskedUrl(config.databaseUrl))} npx climate-pulse`;
  const dir = resolve(cwd, config.dataDir);
  if (dir === resolve(cwd, 'data')) return 'npx climate-pulse';
  return `DATA_DIR=${shellWord(dir)} npx climate-pulse`;
}

/**
 * The line that goes with hints whose DATABASE_URL shows `***` for a password: the hint runs once
 * the password is back in place (or the variable exported in that shell and dropped from the line).
 * Undefined when nothing is hidden.
 */
export function maskedNote(config: Pick<Config, 'databaseUrl'>): string | undefined {
  if (!config.databaseUrl || maskedUrl(config.databaseUrl) === config.databaseUrl) return undefined;
  return "  (DATABASE_URL's password is shown as ***: put it back, or export DATABASE_URL in that shell and leave it out of the line)";
}
