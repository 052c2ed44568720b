import { createHash, createHmac } from 'node:crypto';

/**
 * An independent model of CONTRACT.md section 5 (GET /comments), written from the contract and
 * not from the service's code: the tests compare every answer with it. One model per organization.
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

/** What a week's release (or a release of its late pools) recorded of one pulse. */
interface Frozen {
  /** The status it had at that release: GET /pulses shows it from then on. */
  status: 'CLEAN' | 'FLAGGED';
  /** The cell key (`cell#batch`) it is released in, or null (FLAGGED at the release: never released). */
  cell: string | null;
}

export interface ModelCell {
  week: number;
  /** The group, or 'rest'. */
  name: string;
  batch: number;
  /** CLEAN pulses at its release. */
  sample: number;
  /** Whether its comments are returned (a group of >= 5, or a remainder of >= 5). */
  released: boolean;
  members: string[];
}

interface FrozenWeek {
  batches: number;
  cells: Map<string, ModelCell>;
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
  readonly frozenWeeks = new Map<number, FrozenWeek>();
  readonly frozen = new Map<string, Frozen>();
  /** Every release of late pools: the cells it added. */
  readonly lateCells: ModelCell[] = [];
  /** The status each pulse arrived with (a re-sent pulse keeps its first). */
  private readonly arrival = new Map<string, 'CLEAN' | 'FLAGGED'>();
  private readonly orderKey: Buffer;
  /** The organization's order salt, made with its row: read it from the database (`readSalt`). */
  salt?: Buffer;

  constructor(
    secret: string,
    private readonly delayMs: number,
    readonly orgId: string,
  ) {
    this.orderKey = createHash('sha256').update('comments-order:').update(secret).digest();
  }

  /** Reads the organization's order salt, which the database makes at random with the row. */
  async readSalt(db: { query<T>(q: { name: string; text: string }, params: unknown[]): Promise<T[]> }) {
    const [r] = await db.query<{ order_salt: Uint8Array | null }>({ name: 'test.order_salt', text: 'SELECT order_salt FROM organizations WHERE id = $1' }, [
      this.orgId,
    ]);
    this.salt = r.order_salt ? Buffer.from(r.order_salt) : Buffer.from(this.orgId, 'utf8');
    return this;
  }

  add(pulses: ModelPulse[]) {
    for (const p of pulses) {
      if (this.pulses.has(p.id)) continue;
      this.pulses.set(p.id, { ...p });
      this.arrival.set(p.id, p.moderationStatus);
    }
    return this;
  }

  /** Comments an admin hid in the console (by handle): they leave every answer, nothing else moves. */
  readonly hidden = new Set<string>();

  /** Whether the pulse's comment is in answers of its released cell: CLEAN, with a comment, not hidden. */
  showsComment(id: string): boolean {
    return hasComment(this.pulses.get(id)!) && !this.hidden.has(id);
  }

  /** A change of moderation status (the moderation operation). */
  setStatus(id: string, status: 'CLEAN' | 'FLAGGED') {
    this.pulses.get(id)!.moderationStatus = status;
  }

  /** The status GET /pulses shows: as at the release that recorded the pulse, else the one it arrived with. */
  shownStatus(id: string): 'CLEAN' | 'FLAGGED' {
    return this.frozen.get(id)?.status ?? this.arrival.get(id)!;
  }

  rank(id: string): Buffer {
    if (!this.salt) throw new Error(`the model of ${this.orgId} needs the organization's order salt (readSalt) to order comments`);
    return createHmac('sha256', this.orderKey)
      .update(Buffer.concat([this.salt, Buffer.from([0]), Buffer.from(id, 'utf8')]))
      .digest();
  }

  weekOf(id: string): number {
    return mondayOf(Date.parse(this.pulses.get(id)!.createdAt));
  }

  cellOf(id: string): ModelCell | undefined {
    const f = this.frozen.get(id);
    return f?.cell ? this.frozenWeeks.get(this.weekOf(id))!.cells.get(f.cell) : undefined;
  }

  private inWeek(week: number) {
    return [...this.pulses.values()].filter((p) => mondayOf(Date.parse(p.createdAt)) === week);
  }

  /**
   * A pulse is frozen CLEAN when it is CLEAN now and was shown CLEAN until its release (one public
   * life per pulse): a pulse that arrived FLAGGED stays FLAGGED whatever a moderator did.
   */
  private freezesClean(p: ModelPulse): boolean {
    return p.moderationStatus === 'CLEAN' && this.shownStatus(p.id) === 'CLEAN';
  }

  /** A week's first release: every pulse frozen; groups of >= 5 frozen CLEAN are cells, the others pooled into the remainder. */
  private cutWeek(week: number, pulses: ModelPulse[]): ModelCell[] {
    const byGroup = new Map<string, ModelPulse[]>();
    for (const p of pulses) if (this.freezesClean(p)) byGroup.set(groupOf(p), [...(byGroup.get(groupOf(p)) ?? []), p]);
    const small = [...byGroup.values()].filter((ps) => ps.length < 5).flat();
    const cells: ModelCell[] = [];
    for (const [g, ps] of byGroup) {
      if (ps.length >= 5) cells.push({ week, name: g, batch: 0, sample: ps.length, released: true, members: ps.map((p) => p.id) });
    }
    if (small.length > 0) {
      cells.push({ week, name: 'rest', batch: 0, sample: small.length, released: small.length >= 5, members: small.map((p) => p.id) });
      // The team's own view of a pooled group: withheld with subteamId.
      for (const [g, ps] of byGroup) if (ps.length < 5) cells.push({ week, name: g, batch: 0, sample: ps.length, released: false, members: [] });
    }
    return cells;
  }

  /**
   * A release of late pools, decided by the pools as shown (pulses that arrived CLEAN): pools of
   * >= 5 are due, pools of 1-4 when they hold >= 5 together. Then as a week's release: groups with
   * >= 5 frozen CLEAN are cells, the rest of what it covers a remainder.
   */
  private cutLate(week: number, pool: ModelPulse[], batch: number): { cells: ModelCell[]; covered: ModelPulse[] } {
    const byGroup = new Map<string, ModelPulse[]>();
    for (const p of pool) byGroup.set(groupOf(p), [...(byGroup.get(groupOf(p)) ?? []), p]);
    const smallCount = [...byGroup.values()].filter((ps) => ps.length < 5).reduce((n, ps) => n + ps.length, 0);
    const covered = [...byGroup.values()].filter((ps) => ps.length >= 5 || smallCount >= 5);
    const cells: ModelCell[] = [];
    const rest: ModelPulse[] = [];
    for (const ps of covered) {
      const clean = ps.filter((p) => p.moderationStatus === 'CLEAN');
      const g = groupOf(ps[0]);
      if (clean.length >= 5) cells.push({ week, name: g, batch, sample: clean.length, released: true, members: clean.map((p) => p.id) });
      else {
        rest.push(...clean);
        if (clean.length > 0) cells.push({ week, name: g, batch, sample: clean.length, released: false, members: [] });
      }
    }
    if (rest.length > 0) cells.push({ week, name: 'rest', batch, sample: rest.length, released: rest.length >= 5, members: rest.map((p) => p.id) });
    return { cells, covered: covered.flat() };
  }

  private record(fw: FrozenWeek, cells: ModelCell[]) {
    for (const c of cells) {
      const key = `${c.name}#${c.batch}`;
      fw.cells.set(key, c);
      for (const id of c.members) this.frozen.set(id, { status: 'CLEAN', cell: key });
    }
  }

  /** The first answer covering a released week: freeze it if it holds any pulse, else release due late pools. */
  private settle(week: number) {
    const fw = this.frozenWeeks.get(week);
    if (!fw) {
      const pulses = this.inWeek(week);
      if (pulses.length === 0) return;
      const w: FrozenWeek = { batches: 1, cells: new Map() };
      const cells = this.cutWeek(week, pulses);
      for (const p of pulses) if (!this.freezesClean(p)) this.frozen.set(p.id, { status: 'FLAGGED', cell: null });
      this.frozenWeeks.set(week, w);
      this.record(w, cells);
      return;
    }
    const { cells, covered } = this.cutLate(week, this.latePool(week), fw.batches);
    if (covered.length === 0) return;
    fw.batches++;
    for (const p of covered) if (p.moderationStatus !== 'CLEAN') this.frozen.set(p.id, { status: 'FLAGGED', cell: null });
    this.record(fw, cells);
    this.lateCells.push(...cells.filter((c) => c.released));
  }

  /** Pulses of a frozen week that no release recorded and that are shown CLEAN (they arrived CLEAN). */
  latePool(week: number): ModelPulse[] {
    return this.inWeek(week).filter((p) => !this.frozen.has(p.id) && this.arrival.get(p.id) === 'CLEAN');
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
    const weeks = new Set([...this.pulses.values()].map((p) => mondayOf(Date.parse(p.createdAt))));
    for (let w = lastReleased; w >= first; w -= WEEK) {
      if (!weeks.has(w)) continue;
      this.settle(w);
      const fw = this.frozenWeeks.get(w);
      if (!fw) continue;
      const cellName = team === undefined ? undefined : `team:${team}`;
      const ids = [...this.frozen]
        .filter(([id, f]) => {
          if (!f.cell || this.weekOf(id) !== w) return false;
          const c = fw.cells.get(f.cell)!;
          return c.released && (cellName === undefined || c.name === cellName) && this.showsComment(id);
        })
        .map(([id]) => id)
        .sort((a, b) => Buffer.compare(this.rank(a), this.rank(b)));
      out.ids.push(...ids);
      // Withheld: frozen cells of 1-4 of the group (or remainders of 1-4), and late pools not yet released.
      const small = [...fw.cells.values()].some((c) => !c.released && c.name === (cellName ?? 'rest'));
      const late = this.latePool(w).some((p) => cellName === undefined || groupOf(p) === cellName);
      if (small || late) out.suppressed = true;
    }
    return out;
  }

  /** The released cells that the comments of `ids` belong to, each with the ids of its comments visible now. */
  cellsOf(ids: Iterable<string>): Map<string, { cell: ModelCell; commentIds: Set<string> }> {
    const out = new Map<string, { cell: ModelCell; commentIds: Set<string> }>();
    for (const id of ids) {
      const cell = this.cellOf(id)!;
      const key = `${ymd(cell.week)}/${cell.name}#${cell.batch}`;
      if (!out.has(key)) out.set(key, { cell, commentIds: new Set(cell.members.filter((m) => this.showsComment(m))) });
    }
    return out;
  }
}

export const hasComment = (p: ModelPulse) => p.moderationStatus === 'CLEAN' && p.comment !== null && p.comment !== '';
