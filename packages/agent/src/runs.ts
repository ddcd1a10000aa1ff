/**
 * Runs as the tree records them (AG-3, AG-6): why a run stopped (`<stop reason steps effective calls
 * tokens>` in `<body>`) and the counters of the current run, read from the tree — everything after
 * the previous `<stop>` — so they survive a crash.
 */
import { bodyOf } from "@strata/engine";
import type { RunContext } from "./context.ts";
import { type AnySession, commit } from "./port.ts";
import { ATTR, CALL, FINAL_STOPS, LABEL, ROLE, type StopReason, TAG, TURN } from "./vocabulary.ts";

/** What a branch has to continue (AG-17), read from its tree: what `runAgent` without a task does. */
export type RunState =
  /**
   * No user turn on the branch: there is no task to continue (the process that created the session
   * stopped before recording it, or the branch was forked before it). `runAgent` without a task
   * refuses (`EngineError` "no-task"); start a run with a task instead.
   */
  | { readonly kind: "no-task" }
  /** The last run stopped for good and nothing is open: a new task is needed (`runAgent` returns that stop). */
  | { readonly kind: "finished"; readonly stop: StopReason }
  /**
   * Something to continue: open calls, a reply cut off, a task not answered yet, or a run that
   * stopped early (max steps, budget, cancelled, a model or prompt error).
   */
  | { readonly kind: "resumable"; readonly lastStop: string | undefined };

/**
 * Whether the session's branch has a task to continue, and in what state. Costs the current run
 * plus the walk to the branch's first user turn (the first element of `<body>`, as a rule).
 */
export function runState(session: AnySession): RunState {
  const tree = session.durableTree;
  let task = false;
  for (let id = tree.rec(bodyOf(tree).id)?.first ?? 0; id !== 0 && !task; ) {
    const r = tree.rec(id);
    if (r === undefined) break;
    task = r.tag === TAG.turn && r.attrs[ATTR.role] === ROLE.user;
    id = r.next;
  }
  if (!task) return { kind: "no-task" };
  const counts = runCounts(session);
  if (counts.lastIsStop && FINAL_STOPS.has(counts.lastStop ?? "") && session.live.size === 0)
    return { kind: "finished", stop: counts.lastStop as StopReason };
  return { kind: "resumable", lastStop: counts.lastStop };
}

export interface RunResult {
  readonly stop: StopReason;
  readonly detail?: string;
  /** Model turns in this run, and calls that actually executed. */
  readonly steps: number;
  readonly effective: number;
  readonly calls: number;
  readonly tokens: number;
}

export interface Counts {
  steps: number;
  effective: number;
  calls: number;
  tokens: number;
}

/** The counters of the current run, read from the tree: everything after the last `<stop>`. */
export function runCounts(session: AnySession): Counts & { lastStop: string | undefined; lastIsStop: boolean } {
  // Walks back from the end of <body> to the previous <stop>: the cost of the current run only.
  const tree = session.durableTree;
  const counts: Counts = { steps: 0, effective: 0, calls: 0, tokens: 0 };
  let lastStop: string | undefined;
  let id = tree.rec(bodyOf(tree).id)?.last ?? 0;
  const lastIsStop = id !== 0 && tree.rec(id)?.tag === TAG.stop;
  for (; id !== 0; id = tree.rec(id)?.prev ?? 0) {
    const r = tree.rec(id);
    if (r === undefined) break;
    if (r.tag === TAG.stop) {
      lastStop = r.attrs[ATTR.reason];
      break;
    }
    if (r.tag !== TAG.turn || r.attrs[ATTR.role] !== ROLE.assistant) continue;
    if (r.attrs[ATTR.status] === TURN.complete || r.attrs[ATTR.status] === TURN.failed) counts.steps++;
    for (let c = r.first; c !== 0; c = tree.rec(c)?.next ?? 0) {
      const k = tree.rec(c);
      if (k === undefined) break;
      if (k.tag === TAG.usage) counts.tokens += Number(k.attrs[ATTR.input] ?? 0) + Number(k.attrs[ATTR.output] ?? 0);
      if (k.tag !== TAG.call) continue;
      counts.calls++;
      if (k.attrs[ATTR.status] === CALL.executed) counts.effective++;
    }
  }
  return { ...counts, lastStop, lastIsStop };
}

/** The `<stop>` element of a run that ends for `reason` with these counters. */
export function stopSpec(reason: StopReason, counts: Counts, detail?: string): { tag: string; attrs: Record<string, string> } {
  const attrs: Record<string, string> = {
    [ATTR.reason]: reason,
    [ATTR.steps]: String(counts.steps),
    [ATTR.effective]: String(counts.effective),
    [ATTR.calls]: String(counts.calls),
    [ATTR.tokens]: String(counts.tokens),
  };
  if (detail !== undefined) attrs[ATTR.detail] = detail;
  return { tag: TAG.stop, attrs };
}

/** Appends the `<stop>` element in its own event, unless the caller folds it into another. */
export async function commitStop(session: AnySession, reason: StopReason, counts: Counts, detail?: string): Promise<void> {
  await commit(session, (d) => void d.appendChild(bodyOf(d.tree).id, stopSpec(reason, counts, detail)), { label: LABEL.runStop });
}

/** Ends the run: records its `<stop>` (its own event), tells the UI, and returns the result. */
export async function stopRun(run: RunContext, reason: StopReason, detail?: string): Promise<RunResult> {
  await commitStop(run.session, reason, run.counts, detail);
  run.emit({ type: "stop", reason, ...(detail !== undefined ? { detail } : {}) });
  return runResult(run.session, reason, detail);
}

/** The result of the run that just ended: the counters its `<stop>` recorded. */
export function runResult(session: AnySession, reason: StopReason, detail?: string): RunResult {
  const tree = session.durableTree;
  const stop = tree.get(bodyOf(tree).id)?.lastChild;
  const n = (k: string): number => Number(stop?.tag === TAG.stop ? (stop.attrs[k] ?? 0) : 0);
  return {
    stop: reason,
    ...(detail !== undefined ? { detail } : {}),
    steps: n(ATTR.steps),
    effective: n(ATTR.effective),
    calls: n(ATTR.calls),
    tokens: n(ATTR.tokens),
  };
}
