/**
 * The argument checks of the `Store` contract (ST-20), the same for every backend: each throws a
 * `bad-input` StoreError that says what is wrong with which argument, before anything is written.
 * `CheckedStore` (checked-store.ts) calls them on every method; they are cheap (`typeof`, integer
 * and regex tests), so the append path pays no more than it did when each backend checked alone.
 */
import { messageOf, StoreError } from "./errors.ts";
import { isHash } from "./hash.ts";
import { BRANCH_NAME } from "./ids.ts";

/** The latest timestamp the store accepts: 9999-12-31T23:59:59.999Z (ST-20). */
export const TS_MAX = 253_402_300_799_999;

/** True when `ts` is a timestamp the store accepts: whole milliseconds from 1970 to the end of 9999. */
export const isTimestamp = (ts: unknown): ts is number => Number.isSafeInteger(ts) && (ts as number) >= 0 && (ts as number) <= TS_MAX;

const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * The index of the first lone UTF-16 surrogate in `s`, or -1. Text with one cannot be stored: SQLite
 * keeps UTF-8, and the driver writes such a code unit as bytes that read back as three U+FFFD.
 * One-byte strings (all of Latin-1) are answered without a scan.
 */
export function loneSurrogate(s: string): number {
  if (isWellFormed?.call(s)) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
    else return i;
  }
  return -1;
}

/** Refuses text that cannot be stored as it is (ST-20): a lone surrogate. */
export function checkText(s: string, what: string, where: string): void {
  const at = loneSurrogate(s);
  if (at >= 0)
    throw new StoreError(
      "bad-input",
      `${where}: ${what} is not well-formed Unicode (a lone surrogate, U+${s.charCodeAt(at).toString(16).toUpperCase()}, at index ${at}), so it cannot be stored as text; nothing was written — escape it (JSON.stringify does) or replace it (String.prototype.toWellFormed)`,
    );
}

export function notFound(what: string): never {
  throw new StoreError("not-found", `${what} does not exist`);
}

/** A name for a new branch (fork, keepAs): `BRANCH_NAME`. */
export function checkBranchName(name: unknown): void {
  if (typeof name !== "string" || !BRANCH_NAME.test(name))
    throw new StoreError(
      "bad-input",
      `branch name ${typeof name === "string" ? JSON.stringify(name) : show(name)} is not allowed: use letters, digits, ".", "_", "/", "-" (no "@" or "~"; no empty, "." or ".." part between slashes), at most 100`,
    );
}

/** A value as it appears in a message: short, and never throws. */
export function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  if (typeof v === "bigint") return `${v}n`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") {
    const name = (v as object).constructor?.name;
    return name === undefined || name === "Object" ? "an object" : `a ${name}`;
  }
  return `a ${typeof v}`;
}

export function checkId(id: unknown, where: string): void {
  if (!Number.isSafeInteger(id)) throw new StoreError("bad-input", `${where}: expected an event id (an integer), got ${show(id)}`);
}

export function checkCount(n: unknown, where: string): void {
  if (typeof n !== "number" || !(n >= 0) || (!Number.isSafeInteger(n) && n !== Number.POSITIVE_INFINITY))
    throw new StoreError("bad-input", `${where}: expected a whole number ≥ 0, got ${show(n)}`);
}

/** The arguments of a chain read: an event id, then two counts. */
export function checkChainRead(what: string, head: unknown, afterDepth: unknown, limit: unknown): void {
  checkId(head, `${what}: the head`);
  checkCount(afterDepth, `${what}: afterDepth`);
  checkCount(limit, `${what}: limit`);
}

export function checkSession(id: unknown, where: string): void {
  if (typeof id !== "string") throw new StoreError("bad-input", `${where}: expected a session id (a string), got ${show(id)}`);
}

export function checkHash(h: unknown, where: string): void {
  if (!isHash(h))
    throw new StoreError("bad-input", `${where}: expected a blob hash (64 lowercase hex characters, as putBlob returns), got ${show(h)}`);
}

export function checkTitle(title: unknown, where: string): void {
  if (title !== undefined && title !== null && typeof title !== "string")
    throw new StoreError("bad-input", `${where}: the title must be a string or null, got ${show(title)}`);
  if (typeof title === "string") checkText(title, "the title", where);
}

export function checkMetadata(m: unknown, where: string): void {
  if (m === undefined) return;
  if (typeof m !== "object" || m === null || Array.isArray(m))
    throw new StoreError("bad-input", `${where}: metadata must be a plain object (merged key by key), got ${show(m)}`);
  try {
    JSON.stringify(m);
  } catch (e) {
    throw new StoreError(
      "bad-input",
      `${where}: metadata cannot be stored as JSON (${messageOf(e)}); give plain values (no BigInt, no cycles); nothing was written`,
    );
  }
}

/** What every appended event must be, checked before any write on every path (ST-20). */
export function checkEvent(e: unknown, where: string): void {
  if (typeof e !== "object" || e === null)
    throw new StoreError("bad-input", `${where} must be an object {kind, data, label?, by?, ts?}, got ${show(e)}`);
  const { kind, data, label, by, ts, search, searchDerived } = e as Record<string, unknown>;
  if (typeof kind !== "string" || kind === "")
    throw new StoreError(
      "bad-input",
      `${where} needs a kind (a non-empty string such as "patch@1"), got ${show(kind)}; nothing was written`,
    );
  if (typeof data !== "string")
    throw new StoreError(
      "bad-input",
      `${where}: data must be a string (the engine stores JSON text), got ${show(data)}; nothing was written`,
    );
  if (label !== undefined && label !== null && typeof label !== "string")
    throw new StoreError("bad-input", `${where}: label must be a string or null, got ${show(label)}; nothing was written`);
  if (by !== undefined && by !== null && typeof by !== "string")
    throw new StoreError("bad-input", `${where}: by must be a string or null, got ${show(by)}; nothing was written`);
  if (ts !== undefined && !isTimestamp(ts)) throw badTimestamp(ts, where);
  checkText(kind, "kind", where);
  checkText(data, "data", where);
  if (typeof label === "string") checkText(label, "label", where);
  if (typeof by === "string") checkText(by, "by", where);
  if (search !== undefined && typeof search !== "string")
    throw new StoreError(
      "bad-input",
      `${where}: search must be a string (the event's searchable text), got ${show(search)}; nothing was written`,
    );
  if (typeof search === "string") checkText(search, "search", where);
  if (searchDerived !== undefined && typeof searchDerived !== "boolean")
    throw new StoreError(
      "bad-input",
      `${where}: searchDerived must be true or false (whether search is derived from data, SE-8), got ${show(searchDerived)}; nothing was written`,
    );
}

/** A timestamp outside what the store accepts (ST-20): not whole milliseconds, before 1970, or after 9999. */
export function badTimestamp(ts: unknown, where: string): StoreError {
  return new StoreError(
    "bad-input",
    `${where}: ts must be whole milliseconds since the epoch between 1970 and the end of year 9999 (0 … ${TS_MAX}), got ${show(ts)}; nothing was written`,
  );
}

/** A branch that must already exist is named by any string (unknown ones are `not-found`). */
export function checkBranch(name: unknown, where: string): void {
  if (typeof name !== "string") throw new StoreError("bad-input", `${where}: the branch must be a name, got ${show(name)}`);
}

export function checkFunction(fn: unknown, where: string, what: string): void {
  if (typeof fn !== "function") throw new StoreError("bad-input", `${where} takes a function that ${what}, got ${show(fn)}`);
}

/** An argument that must be an object of options (`what` lists its fields), or undefined when `optional`. */
export function checkOptions(o: unknown, where: string, what: string, optional = true): void {
  if (optional && o === undefined) return;
  if (typeof o !== "object" || o === null) throw new StoreError("bad-input", `${where} takes ${what}, got ${show(o)}`);
}

/** A snapshot page reference: a blob hash or null (ST-13). */
export function checkPage(p: unknown, i: number): void {
  if (p !== null && !isHash(p))
    throw new StoreError(
      "bad-input",
      `putSnapshot: page ${i} is ${show(p)}, not a blob hash (64 lowercase hex characters returned by putBlob) or null; nothing was written`,
    );
}

/** Longest `owner` text of a lease (ST-23). */
export const OWNER_MAX = 4096;

export function checkLeaseArgs(session: unknown, branch: unknown, where: string): void {
  if (typeof session !== "string") throw new StoreError("bad-input", `${where}: expected a session id (a string), got ${show(session)}`);
  if (typeof branch !== "string" || !BRANCH_NAME.test(branch))
    throw new StoreError("bad-input", `${where}: expected a branch name, got ${show(branch)}`);
}

export function checkToken(token: unknown, where: string): void {
  if (!Number.isSafeInteger(token) || (token as number) < 1)
    throw new StoreError("bad-input", `${where}: expected a lease token (a positive integer from acquireLease), got ${show(token)}`);
}

export function checkOwner(owner: unknown, stale: unknown): void {
  if (typeof owner !== "string" || owner === "" || owner.length > OWNER_MAX)
    throw new StoreError(
      "bad-input",
      `acquireLease: the owner must be a non-empty string of at most ${OWNER_MAX} characters, got ${show(owner)}`,
    );
  checkText(owner, "the owner", "acquireLease");
  if (stale !== undefined && typeof stale !== "function")
    throw new StoreError("bad-input", `acquireLease: stale must be a function (holder) => boolean, got ${show(stale)}`);
}

/** `verify`'s hooks: an object whose members, when present, are functions. */
export function checkHooks(hooks: unknown): void {
  checkOptions(hooks, "verify", "{checkEvent?, checkSnapshot?, progress?} as hooks", false);
  for (const name of ["checkEvent", "checkSnapshot", "progress"] as const) {
    const f = (hooks as Record<string, unknown>)[name];
    if (f !== undefined && typeof f !== "function")
      throw new StoreError("bad-input", `verify: hooks.${name} must be a function, got ${show(f)}`);
  }
}
