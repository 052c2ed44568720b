import { createHash, createHmac } from 'node:crypto';

/**
 * An independent model of CONTRACT.md section 5 (GET /comments), written from the contract and
 * not from the service's code: the tests compare every answer with it.
 */
export interface ModelPulse {
  id: string;
  comment: string | null;
  moderationStatus: 'CLEAN' | 'FLAGGED';
  subteamId: string | null;
  createdAt: string;
}

const DAY = 86_400_000;
const WEEK = 7 * DAY;

export const mondayOf = (t: number) => {
  const d = Math.floor(t / DAY) * DAY;
  return d - ((new Date(d).getUTCDay() + 6) % 7) * DAY;
};
export const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);
const groupOf = (p: ModelPulse) => (p.subteamId === null ? 'none' : `team:${p.subteamId}`);

interface FrozenWeek {
  /** pulse id -> the cell it is released in (its group, or 'rest'). */
  cellOf: Map<string, string>;
  /** cell -> its sample at freeze time. */
  sample: Map<string, number>;
  withdrawn: Set<string>;
}

export interface ModelAnswer {
  /** Ids of the pulses whose comments the answer must hold, in the order it must hold them. */
  ids: string[];
  suppressed: boolean;
  from: string;
  to: string;
  releasedThrough: string | null;
}

export class CommentModel {
  readonly pulses = new Map<string, ModelPulse>();
  readonly frozen = new Map<number, FrozenWeek>();
  private readonly orderKey: Buffer;

  constructor(
    secret: string,
    private readonly delayMs: number,
  ) {
    this.orderKey = createHash('sha256').update('comments-order:').update(secret).digest();
  }

  add(pulses: ModelPulse[]) {
    for (const p of pulses) this.pulses.set(p.id, { ...p });
  }

  /** A change of moderation status, as an operator would make it in SQL. */
  setStatus(id: string, status: 'CLEAN' | 'FLAGGED') {
    const p = this.pulses.get(id)!;
    const was = p.moderationStatus;
    const released = hasComment(p);
    p.moderationStatus = status;
    const week = this.frozen.get(mondayOf(Date.parse(p.createdAt)));
    const cell = week?.cellOf.get(id);
    if (!week || cell === undefined || was !== 'CLEAN' || status === 'CLEAN') return;
    const stillClean = [...week.cellOf].filter(([pid, c]) => c === cell && this.pulses.get(pid)!.moderationStatus === 'CLEAN').length;
    if (week.sample.get(cell)! >= 5 && (released || stillClean < 5)) week.withdrawn.add(cell);
  }

  rank(id: string): Buffer {
    return createHmac('sha256', this.orderKey).update(id, 'utf8').digest();
  }

  weekOf(id: string): number {
    return mondayOf(Date.parse(this.pulses.get(id)!.createdAt));
  }

  private freeze(week: number) {
    if (this.frozen.has(week)) return;
    const members = [...this.pulses.values()].filter((p) => p.moderationStatus === 'CLEAN' && mondayOf(Date.parse(p.createdAt)) === week);
    const sizes = new Map<string, number>();
    for (const p of members) sizes.set(groupOf(p), (sizes.get(groupOf(p)) ?? 0) + 1);
    const cellOf = new Map<string, string>();
    const sample = new Map<string, number>();
    let rest = 0;
    for (const p of members) {
      const n = sizes.get(groupOf(p))!;
      cellOf.set(p.id, n >= 5 ? groupOf(p) : 'rest');
      if (n < 5) rest++;
    }
    for (const [g, n] of sizes) if (n >= 5) sample.set(g, n);
    if (rest > 0) sample.set('rest', rest);
    this.frozen.set(week, { cellOf, sample, withdrawn: new Set() });
  }

  /** Whether a frozen cell currently releases its comments. */
  private visible(week: FrozenWeek, cell: string) {
    return (week.sample.get(cell) ?? 0) >= 5 && !week.withdrawn.has(cell);
  }

  /** The answer to a first page walk of [from, to] (calendar days) for a team or the organization, at `now`. */
  answer(fromDay: string, toDay: string, team: string | undefined, now: number): ModelAnswer {
    const first = mondayOf(Date.parse(fromDay));
    const last = mondayOf(Date.parse(toDay));
    const releasable = mondayOf(now - WEEK - this.delayMs);
    const lastReleased = Math.min(last, releasable);
    const out: ModelAnswer = { ids: [], suppressed: false, from: ymd(first), to: ymd(last + 6 * DAY), releasedThrough: null };
    if (lastReleased < first) return out;
    out.releasedThrough = ymd(lastReleased + 6 * DAY);
    for (let w = lastReleased; w >= first; w -= WEEK) {
      this.freeze(w);
      const week = this.frozen.get(w)!;
      const ids = [...week.cellOf]
        .filter(([id, cell]) => this.visible(week, cell) && (team === undefined || cell === `team:${team}`) && hasComment(this.pulses.get(id)!))
        .map(([id]) => id)
        .sort((a, b) => Buffer.compare(this.rank(a), this.rank(b)));
      out.ids.push(...ids);
      // Withheld: CLEAN pulses of the group now, beyond those a visible cell still releases.
      const clean = [...this.pulses.values()].filter(
        (p) => p.moderationStatus === 'CLEAN' && mondayOf(Date.parse(p.createdAt)) === w && (team === undefined || p.subteamId === team),
      );
      const released = clean.filter((p) => {
        const cell = week.cellOf.get(p.id);
        return cell !== undefined && this.visible(week, cell) && (team === undefined || cell === `team:${team}`);
      });
      if (clean.length > released.length) out.suppressed = true;
    }
    return out;
  }

  /** The cells (week and cell name) that the comments of `ids` belong to, with every comment id of each. */
  cellsOf(ids: Iterable<string>): Map<string, { sample: number; commentIds: Set<string> }> {
    const out = new Map<string, { sample: number; commentIds: Set<string> }>();
    for (const id of ids) {
      const w = this.weekOf(id);
      const week = this.frozen.get(w)!;
      const cell = week.cellOf.get(id)!;
      const key = `${ymd(w)}/${cell}`;
      if (!out.has(key)) {
        const commentIds = new Set([...week.cellOf].filter(([pid, c]) => c === cell && hasComment(this.pulses.get(pid)!)).map(([pid]) => pid));
        out.set(key, { sample: week.sample.get(cell) ?? 0, commentIds });
      }
    }
    return out;
  }
}

export const hasComment = (p: ModelPulse) => p.moderationStatus === 'CLEAN' && p.comment !== null && p.comment !== '';
