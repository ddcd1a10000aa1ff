/**
 * Addressing sessions and events (CLI-4, decision 0018). A session is named by its handle (the
 * tail `strata ls` and `strata run` show), any unique prefix or tail of its id (at least four
 * characters for a tail), its whole id, or `@last` — the session with the most recent activity.
 * Then `SESSION@BRANCH`, `SESSION@EVENT`, `SESSION@BRANCH~N` (N events before the branch head)
 * and `SESSION~N`. A bare number where an event is expected is an event id.
 */
import type { Answer, Port } from "@strata/engine";
import { type BranchInfo, drive, type EventId, type EventMeta, type SessionInfo, StoreError, value } from "@strata/store";
import { archivedAt } from "./archive.ts";
import { LAST } from "./command.ts";
import { CliError, UsageError } from "./errors.ts";
import { damageMessage, handlesOf } from "./sessions.ts";

/**
 * Each lookup is written once, as steps (`drive`/`value`, decision 0036): on a SQLite store it
 * answers a value, on the asynchronous port (PostgreSQL) a promise.
 */
type Steps<T> = Generator<unknown, T, unknown>;

export { LAST };

export interface Address {
  readonly session: SessionInfo;
  /** The branch named (or the default branch). */
  readonly branch: BranchInfo;
  /** The event named, or the branch head. */
  readonly event: EventId;
  /** True when the address named an event explicitly (`@EVENT` or `~N`). */
  readonly explicitEvent: boolean;
}

const ADDRESS = /^(@last|[0-9A-Za-z]+)(?:@([A-Za-z0-9._/-]+))?(?:~([0-9]+))?$/;
/** A tail shorter than this is not matched (one or two characters would match by accident). */
const MIN_TAIL = 4;

/** Crockford base32 as people type it: any case; I and L read as 1, O as 0. */
function normalize(ref: string): string {
  return ref.toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
}

/** The session with the most recent activity: the store's one-statement ranking, whatever it holds. */
export function lastSession<P extends Port>(store: P): Answer<P, SessionInfo> {
  return drive(lastSessionSteps(store)) as Answer<P, SessionInfo>;
}

function* lastSessionSteps(store: Port): Steps<SessionInfo> {
  // Archived sessions are not "the last" (CLI-48): the ranking is read in growing pages past them.
  for (let n = 1; ; n *= 4) {
    const page = yield* value(store.recentSessions(n));
    const first = page.find((r) => archivedAt(r.session) === null);
    if (first !== undefined) return first.session;
    if (page.length < n) {
      if (page.length === 0)
        throw new CliError(`there are no sessions in ${store.path} yet, so @last names none; \`strata run\` starts one`);
      throw new CliError(
        `every session in ${store.path} is archived, so @last names none; \`strata ls --archived\` lists them, \`strata archive --undo SESSION\` brings one back`,
      );
    }
  }
}

/**
 * Finds a session by `@last`, whole id, unique prefix or unique tail (a handle); lists the
 * candidates, with their handles, when the reference matches more than one.
 */
export function findSession<P extends Port>(store: P, ref: string): Answer<P, SessionInfo> {
  return drive(findSessionSteps(store, ref)) as Answer<P, SessionInfo>;
}

function* findSessionSteps(store: Port, ref: string): Steps<SessionInfo> {
  if (ref.toLowerCase() === LAST) return yield* lastSessionSteps(store);
  const key = normalize(ref);
  if (!/^[0-9A-Z]+$/.test(key))
    throw new UsageError(`"${ref}" is not a session: give its handle (\`strata ls\` shows them), an id or id prefix, or @last`);
  const exact = yield* value(store.getSession(key as never));
  if (exact !== undefined) return exact;
  const found = new Map((yield* value(store.findSessions(key))).map((s) => [s.id as string, s]));
  let all: SessionInfo[] | undefined;
  if (key.length >= MIN_TAIL) {
    all = yield* value(store.listSessions());
    for (const s of all) if (s.id.endsWith(key)) found.set(s.id, s);
  }
  if (found.size === 1) return [...found.values()][0] as SessionInfo;
  if (found.size === 0) throw new CliError(`no session matches "${ref}"; \`strata ls\` lists them (or use @last)`);
  const handles = handlesOf((all ?? (yield* value(store.listSessions()))).map((s) => s.id));
  const shown = [...found.values()]
    .slice(0, 10)
    .map((s) => `  ${handles.get(s.id) ?? s.id}  ${s.id}  ${s.title ?? ""}`)
    .join("\n");
  throw new CliError(`"${ref}" matches ${found.size} sessions; give a handle or more of the id:\n${shown}`);
}

/** The head event of `branch`, or a clear error naming the damage when it is missing. */
export function headOf<P extends Port>(store: P, branch: BranchInfo): Answer<P, EventMeta> {
  return drive(headOfSteps(store, branch)) as Answer<P, EventMeta>;
}

function* headOfSteps(store: Port, branch: BranchInfo): Steps<EventMeta> {
  const meta = yield* value(store.eventMeta(branch.head));
  if (meta === undefined || meta.session !== branch.session)
    throw new CliError(damageMessage(branch.session, { branch: branch.name, head: branch.head }, store.path));
  return meta;
}

/** Splits `SESSION[@BRANCH|@EVENT][~N]` without touching the store (for checks before opening it). */
export function parseAddress(text: string): { session: string; at: string | undefined; back: number } {
  const m = ADDRESS.exec(text);
  if (m === null)
    throw new UsageError(
      `"${text}" is not a session address; use SESSION, SESSION@BRANCH, SESSION@EVENT or SESSION@BRANCH~N (SESSION: a handle, an id prefix, or @last)`,
    );
  return { session: m[1] as string, at: m[2], back: m[3] === undefined ? 0 : Number(m[3]) };
}

/** Resolves `SESSION[@BRANCH|@EVENT][~N]`; `defaultBranch` applies when none is named. */
export function resolveAddress<P extends Port>(store: P, text: string, defaultBranch = "main"): Answer<P, Address> {
  return drive(resolveAddressSteps(store, text, defaultBranch)) as Answer<P, Address>;
}

function* resolveAddressSteps(store: Port, text: string, defaultBranch: string): Steps<Address> {
  const { session: ref, at, back } = parseAddress(text);
  const session = yield* findSessionSteps(store, ref);
  let branch: BranchInfo | undefined;
  let event: EventId | undefined;
  const atEvent = at !== undefined && /^[0-9]+$/.test(at);
  if (atEvent) {
    event = Number(at) as EventId;
    const meta = yield* value(store.eventMeta(event));
    if (meta === undefined || meta.session !== session.id) throw new CliError(`event ${at} is not an event of session ${session.id}`);
    branch = yield* branchOf(store, session, event, defaultBranch);
  } else {
    const name = at ?? defaultBranch;
    branch = yield* value(store.branch(session.id, name));
    if (branch === undefined)
      throw new CliError(
        `session ${session.id} has no branch "${name}"; branches: ${(yield* value(store.branches(session.id))).map((b) => b.name).join(", ")}`,
      );
    event = (yield* headOfSteps(store, branch)).id;
  }
  if (back > 0) {
    const meta = yield* value(store.eventMeta(event));
    if (meta === undefined) throw new CliError(damageMessage(session.id, { branch: branch.name, head: event }, store.path));
    if (back >= meta.depth) throw new CliError(`${text}: the branch has only ${meta.depth} events`);
    const earlier = yield* value(store.atDepth(event, meta.depth - back));
    if (earlier === undefined)
      throw new CliError(
        `the database ${store.path} is damaged: the chain of event ${event} has no event at depth ${meta.depth - back}; \`strata verify\` lists the damage`,
      );
    event = earlier.id;
  }
  return { session, branch, event, explicitEvent: atEvent || back > 0 };
}

/** The branch an event is on: the default branch if it holds it, else any branch that does. */
function* branchOf(store: Port, session: SessionInfo, event: EventId, preferred: string): Steps<BranchInfo> {
  const branches = yield* value(store.branches(session.id));
  const pref = branches.find((b) => b.name === preferred);
  if (pref !== undefined && (yield* value(store.isAncestor(event, pref.head)))) return pref;
  for (const b of branches) if (yield* value(store.isAncestor(event, b.head))) return b;
  throw new StoreError("not-found", `event ${event} is on no branch of session ${session.id}`);
}

/** `~N` or `head~N` (N events before the head; `head` alone is the head), or undefined. */
function backFromHead(text: string): number | undefined {
  const m = /^(?:~|head~)([0-9]+)$/.exec(text);
  return m !== null ? Number(m[1]) : text === "head" ? 0 : undefined;
}

/**
 * An event on the chain of `branch`: an id, `head`, or `~N` / `head~N` back from the head (bash
 * expands an unquoted `~0` to a directory: `head~N` needs no quotes).
 */
export function eventOnBranch<P extends Port>(store: P, branch: BranchInfo, text: string): Answer<P, EventId> {
  return drive(eventOnBranchSteps(store, branch, text)) as Answer<P, EventId>;
}

function* eventOnBranchSteps(store: Port, branch: BranchInfo, text: string): Steps<EventId> {
  let id: EventId;
  const back = backFromHead(text);
  if (back !== undefined) {
    if (back >= branch.headDepth) throw new CliError(`${text}: branch "${branch.name}" has only ${branch.headDepth} events`);
    const at = yield* value(store.atDepth((yield* headOfSteps(store, branch)).id, branch.headDepth - back));
    if (at === undefined)
      throw new CliError(
        `the database ${store.path} is damaged: branch "${branch.name}" has no event at depth ${branch.headDepth - back}; \`strata verify\` lists the damage`,
      );
    id = at.id;
  } else if (/^[0-9]+$/.test(text)) id = Number(text) as EventId;
  else throw new UsageError(`"${text}" is not an event: give an event id, head, or head~N (N events before the head)`);
  if (!(yield* value(store.isAncestor(id, branch.head))))
    throw new CliError(`event ${text} is not on branch "${branch.name}"; \`strata log\` lists its events`);
  return id;
}

/** Checks an event argument's form (an id, head, head~N or ~N) before any file is opened. */
export function checkEventText(option: string, text: string | undefined): void {
  if (text !== undefined && !/^[0-9]+$/.test(text) && backFromHead(text) === undefined)
    throw new UsageError(
      `--${option} ${JSON.stringify(text)} is not an event: give an event id, head, or head~N (N events before the head)`,
    );
}
