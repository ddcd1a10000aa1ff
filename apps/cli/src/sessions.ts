/**
 * Sessions as a user names and lists them (CLI-4, CLI-13, decision 0018): short handles taken from
 * the random tail of the id, the last activity of each session (the newest head of its branches),
 * and what is damaged when a branch head points at an event that is not there.
 */
import type { Answer, Port } from "@strata/engine";
import { type BranchInfo, drive, type EventMeta, isAsyncStore, type SessionId, type SessionInfo, StoreError, value } from "@strata/store";
import { type ArchivedFilter, recentShown } from "./archive.ts";

/** A handle is at least this many characters of the id's random tail (30 bits). */
export const HANDLE_LENGTH = 6;
/** The random part of a session id (ULID: 10 characters of time, 16 random). */
const TAIL = 16;

/**
 * The handle of every session of `ids`: the shortest tail (at least {@link HANDLE_LENGTH}
 * characters) that no other id ends with and no other id starts with, so it names one session as
 * a tail and is never read as a prefix of another. Ids whose random tails collide get longer
 * handles; ids that are not ULIDs get their whole id.
 */
export function handlesOf(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  let left = [...new Set(ids)];
  for (let n = HANDLE_LENGTH; n <= TAIL && left.length > 0; n++) {
    const tails = new Map<string, number>();
    for (const id of ids) tails.set(id.slice(-n), (tails.get(id.slice(-n)) ?? 0) + 1);
    const heads = new Set(ids.map((id) => id.slice(0, n)));
    left = left.filter((id) => {
      const t = id.slice(-n);
      if (id.length <= n || tails.get(t) !== 1 || (heads.has(t) && !id.startsWith(t))) return true;
      out.set(id, t);
      return false;
    });
  }
  for (const id of left) out.set(id, id);
  return out;
}

/** The handle of one session among those of `store`. */
export function handleOf<P extends Port>(store: P, id: SessionId): Answer<P, string> {
  return drive(
    (function* () {
      return handlesOf((yield* value(store.listSessions())).map((s) => s.id)).get(id) ?? id;
    })(),
  ) as Answer<P, string>;
}

/** A branch whose head event is missing from the store (a damaged file). */
export interface DamagedBranch {
  readonly branch: string;
  readonly head: number;
}

export interface Activity {
  /** The newest head event over the session's branches (undefined when none can be read). */
  readonly last: EventMeta | undefined;
  readonly branches: readonly BranchInfo[];
  /** What is damaged, in words (empty for a sound session). */
  readonly damage: readonly string[];
}

/**
 * The last activity of a session: the newest of its branch heads. A head that cannot be read is
 * skipped and named in `damage`, and so is a session whose branches cannot be read at all, so a
 * listing can go on with the other sessions.
 */
export function activityOf<P extends Port>(store: P, session: SessionId): Answer<P, Activity> {
  return drive(activitySteps(store, session)) as Answer<P, Activity>;
}

function* activitySteps(store: Port, session: SessionId): Generator<unknown, Activity, unknown> {
  let branches: BranchInfo[];
  try {
    branches = yield* value(store.branches(session));
  } catch (e) {
    if (e instanceof StoreError) return { last: undefined, branches: [], damage: [e.message] };
    throw e;
  }
  const damage: string[] = [];
  let last: EventMeta | undefined;
  for (const b of branches) {
    let meta: EventMeta | undefined;
    try {
      meta = yield* value(store.eventMeta(b.head));
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      damage.push(e.message);
      continue;
    }
    if (meta === undefined || meta.session !== session) {
      damage.push(damageMessage(session, { branch: b.name, head: b.head }, store.path));
      continue;
    }
    if (last === undefined || meta.ts > last.ts || (meta.ts === last.ts && meta.id > last.id)) last = meta;
  }
  return { last, branches, damage };
}

/**
 * The `limit` most recently active sessions with their activity: ranked by the store in one
 * statement (`recentSessions`), then only those looked up (over the network, AT_ONCE at a time).
 * Archived sessions are left out unless `archived` says otherwise (archive.ts).
 */
export async function recentActivity(
  store: Port,
  limit: number,
  archived: ArchivedFilter = "hide",
): Promise<{ session: SessionInfo; activity: Activity }[]> {
  const recent = await recentShown(store, limit, archived);
  const found = await atOnce(recent, (r) => Promise.resolve(drive(activitySteps(store, r.session.id))));
  return recent.map((r, k) => ({ session: r.session, activity: found[k] as Activity }));
}

/** Sessions ordered by last activity, most recent first (ties: the newer session first). */
export function byActivity<P extends Port>(store: P): Answer<P, { session: SessionInfo; activity: Activity }[]> {
  return drive(byActivitySteps(store)) as Answer<P, { session: SessionInfo; activity: Activity }[]>;
}

/** {@link byActivity} as steps (steps.ts). */
export function* byActivitySteps(store: Port): Generator<unknown, { session: SessionInfo; activity: Activity }[], unknown> {
  const rows: { session: SessionInfo; activity: Activity }[] = [];
  const sessions = yield* value(store.listSessions());
  if (isAsyncStore(store)) {
    // Over the network the sessions' lookups run AT_ONCE at a time (each is a few round trips).
    const found = yield* value(atOnce(sessions, (s) => Promise.resolve(drive(activitySteps(store, s.id)))));
    sessions.forEach((session, k) => void rows.push({ session, activity: found[k] as Activity }));
  } else for (const session of sessions) rows.push({ session, activity: yield* activitySteps(store, session.id) });
  const key = (r: (typeof rows)[number]): number => r.activity.last?.ts ?? r.session.created;
  return rows.sort((a, b) => key(b) - key(a) || (b.session.id < a.session.id ? -1 : b.session.id > a.session.id ? 1 : 0));
}

/** Sessions whose lookups a listing over the network runs at once (the store's pool holds 10 connections). */
const AT_ONCE = 8;

/** `f` of every item, AT_ONCE at a time, in the items' order. */
export async function atOnce<T, R>(items: readonly T[], f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += AT_ONCE) out.push(...(await Promise.all(items.slice(i, i + AT_ONCE).map(f))));
  return out;
}

/** The branch a listing describes a session by: `main`, or its first branch. */
export function mainOf(activity: Activity): BranchInfo | undefined {
  return activity.branches.find((b) => b.name === "main") ?? activity.branches[0];
}

/** What is wrong, in words, when a branch head is missing. */
export function damageMessage(session: SessionId, d: DamagedBranch, dbPath: string): string {
  return `the database ${dbPath} is damaged: branch "${d.branch}" of session ${session} points at event ${d.head}, which is not in the file; \`strata verify\` lists the damage — restore the file from a copy, or \`strata export\` the sessions that still read`;
}
