/**
 * Input checks shared by every public store method (ST-20): each throws a `StoreError` that says
 * what is wrong with which argument, before anything is written.
 */
import { StoreError } from "./errors.ts";
import { isHash } from "./hash.ts";
import { BRANCH_NAME } from "./ids.ts";

export function notFound(what: string): never {
  throw new StoreError("not-found", `${what} does not exist`);
}

export function checkBranchName(name: string): void {
  if (typeof name !== "string" || !BRANCH_NAME.test(name))
    throw new StoreError(
      "bad-input",
      `branch name ${JSON.stringify(name)} is not allowed: use letters, digits, ".", "_", "/", "-" (no "@" or "~")`,
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
}

export function checkMetadata(m: unknown, where: string): void {
  if (m !== undefined && (typeof m !== "object" || m === null || Array.isArray(m)))
    throw new StoreError("bad-input", `${where}: metadata must be a plain object (merged key by key), got ${show(m)}`);
}

/** What every appended event must be, checked before any write on every path (ST-20). */
export function checkEvent(e: unknown, where: string): void {
  if (typeof e !== "object" || e === null)
    throw new StoreError("bad-input", `${where} must be an object {kind, data, label?, by?, ts?}, got ${show(e)}`);
  const { kind, data, label, by, ts } = e as Record<string, unknown>;
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
  if (ts !== undefined && (typeof ts !== "number" || !Number.isFinite(ts)))
    throw new StoreError("bad-input", `${where}: ts must be milliseconds since the epoch, got ${show(ts)}; nothing was written`);
}
