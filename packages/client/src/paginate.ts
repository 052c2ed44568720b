/** One page of a list: its items and the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * A list that spans pages, fetched lazily: `for await (const item of list)` walks every
 * item of every page; `pages()` walks the pages; `toArray({ max })` collects.
 */
export class PagedList<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<P>) {}

  async *pages(): AsyncGenerator<P, void, undefined> {
    let cursor: string | undefined;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (page.nextCursor === null || page.nextCursor === undefined) return;
      // A server that hands out the same cursor twice would loop forever.
      if (seen.has(page.nextCursor)) throw new Error(`The server repeated the cursor ${page.nextCursor}`);
      seen.add(page.nextCursor);
      cursor = page.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Every item, or the first `max`; no page beyond the one that reaches `max` is fetched. */
  async toArray(opts: { max?: number } = {}): Promise<T[]> {
    const max = opts.max ?? Number.POSITIVE_INFINITY;
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
