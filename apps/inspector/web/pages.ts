/**
 * A branch's events by depth index, fetched a page at a time as the timeline shows them (IN-12):
 * what the timeline renders and the session view selects from, whatever the session's length.
 */
import type { EventRow } from "../src/protocol.ts";
import { get } from "./client.ts";

/** Events per request. */
export const PAGE = 500;

export class EventPages {
  readonly #pages = new Map<number, readonly EventRow[] | Promise<void>>();
  /** Counts loads, so a view can tell that rows it asked for have arrived. */
  version = 0;

  /**
   * `changed` is called when a page arrives; `failed` when one cannot be fetched (it is asked
   * for again the next time it is shown).
   */
  constructor(
    private readonly session: string,
    private readonly branch: string,
    private readonly changed: () => void,
    private readonly failed: (message: string) => void,
  ) {}

  /** Fetches page `p` now (the session view's first page, before anything is shown). */
  async load(p: number): Promise<{ total: number; head: number; events: readonly EventRow[] }> {
    const r = await get("events", { session: this.session }, { branch: this.branch, offset: p * PAGE, limit: PAGE });
    this.#pages.set(p, r.events);
    return r;
  }

  /** Forgets every page (the branch moved to another line). */
  clear(): void {
    this.#pages.clear();
  }

  /** Forgets the page that holds row `i` (it grew: it is fetched again when shown). */
  stale(i: number): void {
    this.#pages.delete(Math.floor(i / PAGE));
  }

  /** Row `i` if its page is here; otherwise undefined, and the page is fetched. */
  row(i: number): EventRow | undefined {
    return this.#page(Math.floor(i / PAGE))?.[i % PAGE];
  }

  /** Row `i`, waiting for its page; undefined when it cannot be had. */
  async rowAsync(i: number): Promise<EventRow | undefined> {
    const p = Math.floor(i / PAGE);
    for (let tries = 0; tries < 50; tries++) {
      const row = this.row(i);
      if (row !== undefined) return row;
      await (this.#pages.get(p) as Promise<void> | undefined);
    }
    return undefined;
  }

  #page(p: number): readonly EventRow[] | undefined {
    const hit = this.#pages.get(p);
    if (Array.isArray(hit)) return hit;
    if (hit === undefined) {
      const loading = get("events", { session: this.session }, { branch: this.branch, offset: p * PAGE, limit: PAGE })
        .then((r) => {
          this.#pages.set(p, r.events);
          this.version++;
          this.changed();
        })
        .catch((e: Error) => {
          this.#pages.delete(p);
          this.failed(e.message);
        });
      this.#pages.set(p, loading);
    }
    return undefined;
  }
}
