import type { Queryable } from '../db/executor.js';
import { pulseTotals } from '../db/repositories/stats.js';

/**
 * Figures read from an organization's pulses (its daily rollups, its weeks' levels), kept in this
 * process until the organization's next pulse (issue 53: the Overview of a year of 50 teams read
 * about 20,000 rollup rows and 25,000 pulses on every view, 45-60 ms of queries, for figures that
 * change only when a pulse comes).
 *
 * Why a pulse is all that can change them: pulses are append-only (a trigger refuses any change of
 * their level, time, team or organization, and any delete), and every insert, through the one door
 * or any other, adds its count and level sum to the organization's `pulse_totals` row in the same
 * transaction. So that row's (count, sum) is different after every pulse: it is the stamp an entry
 * is kept under, read once per view. What else a page shows (teams and their names, rounds and
 * their participation, alerts, actions) is read afresh on every view, never kept here.
 *
 * A view that reads the stamp and then finds it changed computes anew and keeps what it read; a
 * pulse landing between the stamp and the queries only makes the kept figures newer than their
 * stamp, and the next view, seeing a new stamp, reads again. Each process keeps its own (several
 * servers each read the stamp from the one database). Kept per database executor, so two databases
 * never share an entry; at most MAX_ENTRIES per executor, the least recently used dropped first (a
 * year of 50 teams is about a megabyte).
 *
 * Privacy: what is kept is what the page reads anyway (sums by day, team and week), only in memory,
 * and nothing about who answered; a view served from memory tells its reader that no pulse came
 * since the last view, which the figures themselves tell too.
 */
export interface PulseFigures {
  /** What `compute` reads for `key` as of the organization's pulses now: from memory when no pulse came since. */
  get<T>(key: string, compute: () => Promise<T>): Promise<T>;
}

const MAX_ENTRIES = 32;

interface Entry {
  stamp: string;
  value: Promise<unknown>;
}

/** Per executor, `${orgId}\n${key}` to its entry; a Map keeps insertion order, the oldest use first. */
const kept = new WeakMap<object, Map<string, Entry>>();

export async function pulseFigures(db: Queryable, orgId: string): Promise<PulseFigures> {
  const totals = await pulseTotals(db, orgId);
  const stamp = `${totals.count} ${totals.sum}`;
  let entries = kept.get(db);
  if (!entries) {
    entries = new Map();
    kept.set(db, entries);
  }
  const map = entries;
  return {
    get<T>(key: string, compute: () => Promise<T>): Promise<T> {
      const id = `${orgId}\n${key}`;
      const hit = map.get(id);
      map.delete(id);
      if (hit && hit.stamp === stamp) {
        map.set(id, hit);
        return hit.value as Promise<T>;
      }
      const value = compute();
      const entry: Entry = { stamp, value };
      map.set(id, entry);
      // A failed read is never kept: the next view reads again.
      value.catch(() => {
        if (map.get(id) === entry) map.delete(id);
      });
      while (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
      return value;
    },
  };
}
