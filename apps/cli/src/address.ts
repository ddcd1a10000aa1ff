/**
 * Addressing sessions and events (CLI-4): a session by id or unique id prefix; `SESSION@BRANCH`,
 * `SESSION@EVENT`, `SESSION@BRANCH~N` (N events before the branch head) and `SESSION~N`. A bare
 * number where an event is expected is an event id.
 */
import { type BranchInfo, type EventId, type SessionInfo, type Store, StoreError } from "@strata/store";
import { CliError, UsageError } from "./errors.ts";

export interface Address {
  readonly session: SessionInfo;
  /** The branch named (or the default branch). */
  readonly branch: BranchInfo;
  /** The event named, or the branch head. */
  readonly event: EventId;
  /** True when the address named an event explicitly (`@EVENT` or `~N`). */
  readonly explicitEvent: boolean;
}

const ADDRESS = /^([0-9A-Za-z]+)(?:@([A-Za-z0-9._/-]+))?(?:~([0-9]+))?$/;

/** Finds a session by id or unique prefix; lists candidates when ambiguous. */
export function findSession(store: Store, ref: string): SessionInfo {
  const exact = store.getSession(ref.toUpperCase() as never);
  if (exact !== undefined) return exact;
  const found = store.findSessions(ref);
  if (found.length === 1) return found[0] as SessionInfo;
  if (found.length === 0) throw new CliError(`no session matches "${ref}"; \`strata ls\` lists them`);
  const shown = found
    .slice(0, 10)
    .map((s) => `  ${s.id}  ${s.title ?? ""}`)
    .join("\n");
  throw new CliError(`"${ref}" matches ${found.length} sessions; give more of the id:\n${shown}`);
}

/** Resolves `SESSION[@BRANCH|@EVENT][~N]`; `defaultBranch` applies when none is named. */
export function resolveAddress(store: Store, text: string, defaultBranch = "main"): Address {
  const m = ADDRESS.exec(text);
  if (m === null)
    throw new UsageError(`"${text}" is not a session address; use SESSION, SESSION@BRANCH, SESSION@EVENT or SESSION@BRANCH~N`);
  const session = findSession(store, m[1] as string);
  const at = m[2];
  const back = m[3] === undefined ? 0 : Number(m[3]);
  let branch: BranchInfo | undefined;
  let event: EventId | undefined;
  if (at !== undefined && /^[0-9]+$/.test(at)) {
    event = Number(at) as EventId;
    const meta = store.eventMeta(event);
    if (meta === undefined || meta.session !== session.id) throw new CliError(`event ${at} is not an event of session ${session.id}`);
    branch = branchOf(store, session, event, defaultBranch);
  } else {
    const name = at ?? defaultBranch;
    branch = store.branch(session.id, name);
    if (branch === undefined)
      throw new CliError(
        `session ${session.id} has no branch "${name}"; branches: ${store
          .branches(session.id)
          .map((b) => b.name)
          .join(", ")}`,
      );
    event = branch.head;
  }
  if (back > 0) {
    const meta = store.eventMeta(event) as { depth: number };
    if (back >= meta.depth) throw new CliError(`${text}: the branch has only ${meta.depth} events`);
    event = (store.atDepth(event, meta.depth - back) as { id: EventId }).id;
  }
  return { session, branch, event, explicitEvent: at !== undefined && /^[0-9]+$/.test(at) ? true : back > 0 };
}

/** The branch an event is on: the default branch if it holds it, else any branch that does. */
function branchOf(store: Store, session: SessionInfo, event: EventId, preferred: string): BranchInfo {
  const branches = store.branches(session.id);
  const pref = branches.find((b) => b.name === preferred);
  if (pref !== undefined && store.isAncestor(event, pref.head)) return pref;
  const any = branches.find((b) => store.isAncestor(event, b.head));
  if (any === undefined) throw new StoreError("not-found", `event ${event} is on no branch of session ${session.id}`);
  return any;
}

/** An event on the chain of `branch`: an id, or `~N` back from the head. */
export function eventOnBranch(store: Store, branch: BranchInfo, text: string): EventId {
  let id: EventId;
  if (/^~[0-9]+$/.test(text)) {
    const back = Number(text.slice(1));
    if (back >= branch.headDepth) throw new CliError(`${text}: branch "${branch.name}" has only ${branch.headDepth} events`);
    id = (store.atDepth(branch.head, branch.headDepth - back) as { id: EventId }).id;
  } else if (/^[0-9]+$/.test(text)) id = Number(text) as EventId;
  else throw new UsageError(`"${text}" is not an event: give an event id or ~N (N events before the head)`);
  if (!store.isAncestor(id, branch.head))
    throw new CliError(`event ${text} is not on branch "${branch.name}"; \`strata log\` lists its events`);
  return id;
}
