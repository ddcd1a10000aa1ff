/**
 * The arguments every method of the `Store` contract accepts (ST-20), once, for both of its edges:
 * `CheckedStore` (a synchronous backend, checked-store.ts) and `AsyncCheckedStore` (an asynchronous
 * one, async-store.ts). `ARGS[method](...args)` throws a `bad-input` StoreError naming the method
 * and the argument, or returns; `WRITES` are the methods refused inside a read transaction. Each
 * check is given the arguments as the caller passed them (defaults are the method's own).
 */
import {
  checkBranch,
  checkBranchName,
  checkChainRead,
  checkCount,
  checkEvent,
  checkFunction,
  checkHash,
  checkHooks,
  checkId,
  checkLeaseArgs,
  checkMetadata,
  checkOptions,
  checkOwner,
  checkSession,
  checkTitle,
  checkToken,
  show,
} from "./checks.ts";
import { MAX_PAGES } from "./directory.ts";
import { StoreError } from "./errors.ts";
import type { StoreMethod } from "./store.ts";

const bad = (message: string): never => {
  throw new StoreError("bad-input", message);
};

/** An optional boolean option. */
function checkFlag(v: unknown, where: string): void {
  if (v !== undefined && typeof v !== "boolean") bad(`${where} must be true or false, got ${show(v)}`);
}

/** The methods that write: refused inside `readTransaction` and `verify` (ST-17). */
export const WRITES: ReadonlySet<StoreMethod> = new Set<StoreMethod>([
  "transaction",
  "createSession",
  "updateSession",
  "removeSession",
  "collectGarbage",
  "reserve",
  "indexSearch",
  "append",
  "fork",
  "moveHead",
  "putSnapshot",
  "putBlob",
  "acquireLease",
  "renewLease",
  "releaseLease",
]);

// biome-ignore lint/suspicious/noExplicitAny: each check takes its method's arguments as the caller gave them
type Check = (...args: any[]) => void;

/** Per method, the check of its arguments (a method without arguments checks nothing). */
export const ARGS: { readonly [M in StoreMethod]: Check } = {
  close() {},
  transaction(fn: unknown) {
    checkFunction(fn, "store.transaction", "does the writes");
  },
  readTransaction(fn: unknown) {
    checkFunction(fn, "store.readTransaction", "does the reads");
  },
  createSession(input: { title?: unknown; metadata?: unknown; genesis?: unknown }) {
    checkOptions(input, "createSession", "{genesis: {kind, data}, title?, metadata?}", false);
    checkTitle(input.title, "createSession");
    checkMetadata(input.metadata, "createSession");
    checkEvent(input.genesis, "createSession: the genesis event");
  },
  getSession(id: unknown) {
    checkSession(id, "getSession");
  },
  listSessions(query: { limit?: unknown; before?: unknown } = {}) {
    checkOptions(query, "listSessions", "{limit?, before?} as its query", false);
    if (query.limit !== undefined) checkCount(query.limit, "listSessions: limit");
    if (query.before !== undefined) checkSession(query.before, "listSessions: before");
  },
  recentSessions(limit?: unknown) {
    if (limit !== undefined) checkCount(limit, "recentSessions: limit");
  },
  search(query: { text?: unknown; session?: unknown; limit?: unknown; before?: unknown }) {
    checkOptions(query, "search", "{text, session?, limit?, before?} as its query", false);
    if (typeof query.text !== "string") bad(`search: text must be a string of words, got ${show(query.text)}`);
    if (query.session !== undefined) checkSession(query.session, "search: session");
    if (query.limit !== undefined) checkCount(query.limit, "search: limit");
    if (query.before !== undefined) checkId(query.before, "search: before");
  },
  searchBacklog() {},
  indexSearch(entries: unknown, backlog: unknown) {
    if (!Array.isArray(entries)) bad(`indexSearch takes an array of {event, text}, got ${show(entries)}`);
    for (const e of entries as { event?: unknown; text?: unknown; derived?: unknown }[]) {
      if (typeof e !== "object" || e === null) bad(`indexSearch: each entry must be {event, text}, got ${show(e)}`);
      checkId(e.event, "indexSearch: event");
      if (typeof e.text !== "string") bad(`indexSearch: text must be a string, got ${show(e.text)}`);
      if (e.derived !== undefined && typeof e.derived !== "boolean")
        bad(`indexSearch: derived must be true or false, got ${show(e.derived)}`);
    }
    if (!Number.isSafeInteger(backlog) || (backlog as number) < 0)
      bad(`indexSearch: backlog must be an event id or 0, got ${show(backlog)}`);
  },
  findSessions(prefix: unknown) {
    if (typeof prefix !== "string") bad(`findSessions takes a prefix string, got ${show(prefix)}`);
  },
  updateSession(id: unknown, changes: { title?: unknown; metadata?: unknown }) {
    checkSession(id, "updateSession");
    checkOptions(changes, "updateSession", "{title?, metadata?} as its second argument", false);
    checkTitle(changes.title, "updateSession");
    checkMetadata(changes.metadata, "updateSession");
  },
  removeSession(id: unknown, options: { dryRun?: unknown; live?: unknown } = {}) {
    checkSession(id, "removeSession");
    checkOptions(options, "removeSession", "{dryRun?, live?} as options", false);
    checkFlag(options.dryRun, "removeSession: options.dryRun");
    if (options.live !== undefined) checkFunction(options.live, "removeSession: options.live", "judges a lease holder live");
  },
  collectGarbage(options: { dryRun?: unknown; live?: unknown; refs?: unknown }) {
    checkOptions(options, "collectGarbage", "{refs, dryRun?, live?} as options (refs: the engine's storedBlobRefs)", false);
    checkFlag(options.dryRun, "collectGarbage: options.dryRun");
    if (options.live !== undefined) checkFunction(options.live, "collectGarbage: options.live", "judges a lease holder live");
    checkFunction(
      options.refs,
      "collectGarbage: options.refs",
      "lists the blob hashes a blob names (the engine's storedBlobRefs reads its snapshot pages)",
    );
  },
  reserve(session: unknown, count: unknown = 1) {
    checkSession(session, "reserve");
    if (!Number.isSafeInteger(count) || (count as number) < 1) bad(`reserve takes a positive count, got ${show(count)}`);
  },
  branches(session: unknown) {
    checkSession(session, "branches");
  },
  branch(session: unknown, name: unknown) {
    checkSession(session, "branch");
    checkBranch(name, "branch");
  },
  append(session: unknown, branch: unknown, expectedHead: unknown, events: unknown, options?: { lease?: unknown }) {
    checkSession(session, "append");
    checkBranch(branch, "append");
    checkId(expectedHead, "append: the expected head");
    if (!Array.isArray(events)) bad(`append takes an array of events {kind, data, label?, by?, ts?}, got ${show(events)}`);
    const list = events as unknown[];
    // The backend writes only what passed these checks, on every path (ST-20).
    for (let i = 0; i < list.length; i++) checkEvent(list[i], list.length === 1 ? "append: the event" : `append: event ${i}`);
    const lease = options?.lease;
    if (lease !== undefined && (!Number.isSafeInteger(lease) || (lease as number) < 1))
      bad(`append: options.lease must be a lease token (a positive integer from acquireLease), got ${show(lease)}`);
  },
  fork(session: unknown, at: unknown, name: unknown) {
    checkSession(session, "fork");
    checkId(at, "fork: the event to fork at");
    checkBranchName(name);
  },
  moveHead(session: unknown, branch: unknown, to: unknown, options: { expected?: unknown; keepAs?: unknown } = {}) {
    checkSession(session, "moveHead");
    checkBranch(branch, "moveHead");
    checkId(to, "moveHead: the target event");
    checkOptions(options, "moveHead", "{expected?, keepAs?, pin?} as options", false);
    if (options.expected !== undefined) checkId(options.expected, "moveHead: the expected head");
    if (options.keepAs !== undefined) checkBranchName(options.keepAs);
  },
  event(id: unknown) {
    checkId(id, "event");
  },
  eventMeta(id: unknown) {
    checkId(id, "eventMeta");
  },
  events(ids: unknown) {
    if (!Array.isArray(ids)) bad(`events takes an array of event ids, got ${show(ids)}`);
    for (const id of ids as unknown[]) checkId(id, "events");
  },
  eventData(ids: unknown) {
    if (!Array.isArray(ids)) bad(`eventData takes an array of event ids, got ${show(ids)}`);
    for (const id of ids as unknown[]) checkId(id, "eventData");
  },
  chainData(head: unknown, afterDepth: unknown = 0, limit: unknown = Number.MAX_SAFE_INTEGER) {
    checkChainRead("chainData", head, afterDepth, limit);
  },
  chain(head: unknown, afterDepth: unknown = 0, limit: unknown = Number.MAX_SAFE_INTEGER) {
    checkChainRead("chain", head, afterDepth, limit);
  },
  chainMeta(head: unknown, afterDepth: unknown = 0, limit: unknown = Number.MAX_SAFE_INTEGER) {
    checkChainRead("chainMeta", head, afterDepth, limit);
  },
  firstLabeled(head: unknown, label: unknown, afterDepth: unknown = 0) {
    checkId(head, "firstLabeled: the head");
    if (typeof label !== "string") bad(`firstLabeled: the label must be a string, got ${show(label)}`);
    checkCount(afterDepth, "firstLabeled: afterDepth");
  },
  log(session: unknown, query: { branch?: unknown; after?: unknown; limit?: unknown } = {}) {
    checkSession(session, "log");
    checkOptions(query, "log", "{branch?, after?, limit?, reverse?} as its query", false);
    if (query.branch !== undefined) checkBranch(query.branch, "log: query.branch");
    if (query.after !== undefined) checkId(query.after, "log: after");
    if (query.limit !== undefined) checkCount(query.limit, "log: limit");
  },
  isAncestor(ancestor: unknown, descendant: unknown) {
    checkId(ancestor, "isAncestor");
    checkId(descendant, "isAncestor");
  },
  atDepth(head: unknown, depth: unknown) {
    checkId(head, "atDepth: the head");
    if (!Number.isSafeInteger(depth)) bad(`atDepth: the depth must be an integer, got ${show(depth)}`);
  },
  /**
   * The page references themselves are checked by the directory writer as it encodes the chunks
   * that changed (snapshot-pages.ts: `checkPage`): checking every page of every snapshot again here
   * would cost a regex per page, several times the cost of a snapshot that changed a few pages.
   */
  putSnapshot(event: unknown, header: unknown, pages: unknown) {
    checkId(event, "putSnapshot: the event");
    if (typeof header !== "string") bad(`putSnapshot: the header must be a string, got ${show(header)}`);
    if (!Array.isArray(pages)) bad(`putSnapshot: pages must be an array of blob hashes or nulls, got ${show(pages)}`);
    if ((pages as unknown[]).length > MAX_PAGES)
      bad(`putSnapshot: ${(pages as unknown[]).length} pages, more than a snapshot holds (${MAX_PAGES}); nothing was written`);
  },
  nearestSnapshot(event: unknown) {
    checkId(event, "nearestSnapshot");
  },
  snapshots(session: unknown) {
    checkSession(session, "snapshots");
  },
  putBlob(data: unknown) {
    if (typeof data !== "string" && !(data instanceof Uint8Array))
      bad(`putBlob takes a string or bytes (Uint8Array/Buffer), got ${show(data)}`);
  },
  getBlob(hash: unknown) {
    checkHash(hash, "getBlob");
  },
  getBlobs(hashes: unknown) {
    if (!Array.isArray(hashes)) bad(`getBlobs takes an array of blob hashes, got ${show(hashes)}`);
    for (const h of hashes as unknown[]) checkHash(h, "getBlobs");
  },
  hasBlob(hash: unknown) {
    checkHash(hash, "hasBlob");
  },
  acquireLease(session: unknown, branch: unknown, owner: unknown, stale?: unknown) {
    checkLeaseArgs(session, branch, "acquireLease");
    checkOwner(owner, stale);
  },
  renewLease(session: unknown, branch: unknown, token: unknown) {
    checkLeaseArgs(session, branch, "renewLease");
    checkToken(token, "renewLease");
  },
  releaseLease(session: unknown, branch: unknown, token: unknown) {
    checkLeaseArgs(session, branch, "releaseLease");
    checkToken(token, "releaseLease");
  },
  lease(session: unknown, branch: unknown) {
    checkLeaseArgs(session, branch, "lease");
  },
  verify(session?: unknown, hooks: unknown = {}) {
    if (session !== undefined) checkSession(session, "verify");
    checkHooks(hooks);
  },
};
