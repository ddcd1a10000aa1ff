/**
 * ST-5 session ids: 26 characters of Crockford base32 whose first 10 are the time; within one
 * process strictly increasing — in the same millisecond too (the next id takes the next
 * millisecond), and when the clock goes back — while the tails (where handles come from) stay random.
 */
import { describe, expect, it } from "vitest";
import { newSessionId } from "../src/index.ts";

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe("ST-5 session ids", () => {
  it("are strictly increasing within a process, in one millisecond and when the clock goes back", () => {
    const now = Date.UTC(2026, 11, 4);
    const ids = [
      ...Array.from({ length: 2000 }, () => newSessionId(now)),
      ...Array.from({ length: 10 }, () => newSessionId(now - 5000)),
      newSessionId(now + 1),
    ];
    for (const id of ids) expect(id).toMatch(CROCKFORD);
    for (let i = 1; i < ids.length; i++) expect((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    // the time part: the millisecond given, then the next ones for ids made in it (a burst of N runs N ms ahead)
    const timeOf = (id: string) => [...id.slice(0, 10)].reduce((t, c) => t * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(c), 0);
    expect(ids.slice(0, 2011).map(timeOf)).toEqual(Array.from({ length: 2011 }, (_, i) => now + i));
    // ids made together differ within their first ten characters: short prefixes find them
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(ids.length);
    // tails stay random: 2,000 ids of one millisecond have 2,000 distinct 6-character tails, of many first characters
    const tails = new Set(ids.slice(0, 2000).map((id) => id.slice(-6)));
    expect(tails.size).toBe(2000);
    expect(new Set(ids.slice(0, 2000).map((id) => id.slice(-6, -5))).size).toBeGreaterThan(20);
  });
});
