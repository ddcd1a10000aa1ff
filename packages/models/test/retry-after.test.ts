/** Retry-After in both RFC 9110 forms, and retry-after-ms (MO-8). */
import { describe, expect, it } from "vitest";
import { parseHttpDate, parseRetryAfter } from "../src/index.ts";

const now = Date.UTC(2026, 0, 15, 12, 0, 0);

describe("MO-8 parseRetryAfter", () => {
  it("reads delay-seconds (and a decimal some servers send)", () => {
    expect(parseRetryAfter("0", null, now)).toBe(0);
    expect(parseRetryAfter("7", null, now)).toBe(7000);
    expect(parseRetryAfter(" 120 ", null, now)).toBe(120_000);
    expect(parseRetryAfter("1.5", null, now)).toBe(1500);
  });

  it("reads an HTTP-date in all three forms, as GMT whatever the local zone", () => {
    expect(parseRetryAfter("Thu, 15 Jan 2026 12:00:30 GMT", null, now)).toBe(30_000);
    expect(parseRetryAfter("Thursday, 15-Jan-26 12:01:00 GMT", null, now)).toBe(60_000);
    expect(parseRetryAfter("Thu Jan 15 12:00:05 2026", null, now)).toBe(5000);
    expect(parseRetryAfter("Thu Jan  1 00:00:00 2026", null, Date.UTC(2025, 11, 31, 23, 59, 59))).toBe(1000);
  });

  it("a date in the past means now", () => {
    expect(parseRetryAfter("Wed, 14 Jan 2026 12:00:00 GMT", null, now)).toBe(0);
    expect(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", null, now)).toBe(0);
  });

  it("retry-after-ms wins when usable", () => {
    expect(parseRetryAfter("30", "250", now)).toBe(250);
    expect(parseRetryAfter("30", "soon", now)).toBe(30_000);
    expect(parseRetryAfter(null, "12.2", now)).toBe(13);
  });

  it("anything else is unusable, so the client's own backoff applies", () => {
    for (const bad of ["", "-5", "soon", "1e3", "0x10", "Thu, 15 Jan 2026 25:00:00 GMT", "Thu, 32 Jan 2026 12:00:00 GMT", "15 Jan 2026"])
      expect(parseRetryAfter(bad, null, now), bad).toBeUndefined();
    expect(parseRetryAfter(null, null, now)).toBeUndefined();
  });

  it("a two-digit RFC 850 year more than 50 years ahead is in the past century", () => {
    expect(new Date(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", now) as number).toISOString()).toBe("1994-11-06T08:49:37.000Z");
    expect(new Date(parseHttpDate("Monday, 01-Jan-74 00:00:00 GMT", now) as number).getUTCFullYear()).toBe(2074);
  });
});
