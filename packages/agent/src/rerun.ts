/**
 * Deterministic re-runs and counterfactuals (RR-1 … RR-3; DESIGN §5 "replay"). A re-run forks the
 * branch just before its first user turn and drives the agent loop again on the fork, with a
 * model that replays the recorded replies and an executor that re-executes `safe` tools for real
 * and answers `never` tools with their recorded outcomes (nothing with side effects runs twice).
 * Then it walks both branches and reports the first turn or call whose output differs.
 *
 * A counterfactual is the same with overrides: `llm:CALL_ID` replaces the model reply that made
 * call CALL_ID, `tool:CALL_ID` replaces that call's observation. Every override is recorded in
 * the fork (`<meta><rerun>`), so the branch says what made it different.
 *
 * File effects (WS-29). Given a `workspace` (a tracker of a new or empty directory, which the
 * registry's tools act on), the re-run plays in a faithful copy of the recording's files: the
 * directory first gets the files as the fork point had them (the line's baseline: before it no
 * tool had written), each `never` call answered from the recording writes the file changes its
 * outcome recorded, and `safe` calls run for real there — so reads see what they saw then. The
 * loop captures after every call whose tool has effects, as in any run, and a call whose
 * resulting files differ from the recorded ones is a divergence (`files`, naming the path). The
 * baselines are compared too. Without a `workspace` nothing is written or captured and file
 * effects are not compared (`files: false` in the report). Changes the recording made outside
 * the agent (`workspace.outside`) are not replayed.
 */
import type { Element, Tree } from "@strata/dom";
import { bodyOf, EngineError, loadTree, metaOf, type Port } from "@strata/engine";
import { type EventId, type EventMeta, isAsyncStore } from "@strata/store";
import { runAgent } from "./loop.ts";
import { type Model, ModelError, type ModelEvent, type ModelRequest } from "./model.ts";
import { type AnySession, fetchBlobs } from "./port.ts";
import { canonicalJson } from "./requests.ts";
import { baselineDivergence, type FilePair, firstFileDifference, lineFiles, prepareDirectory, startingFiles } from "./rerun-files.ts";
import { startRun } from "./start.ts";
import { type Action, type ActionOutcome, type Executor, outcome, type ToolContext, type ToolRegistry } from "./tools/registry.ts";
import { ATTR, byCall, CALL, DIAG, FINAL_STOPS, LABEL, META, ROLE, type StopReason, TAG, TURN } from "./vocabulary.ts";
import { checkoutWorkspace } from "./workspace/checkout.ts";
import type { WorkspaceTracker } from "./workspace/tracker.ts";

export interface Override {
  readonly kind: "llm" | "tool";
  /** The provider call id (`id` on `<call>`). */
  readonly callId: string;
  /** For `llm`: JSON `{text?, toolCalls?: [{name, arguments}]}`; for `tool`: the observation. */
  readonly content: string;
}

export interface RerunOptions {
  readonly registry: ToolRegistry;
  /** The new branch's name (default `rerun/<branch>` or `whatif/<branch>`, made unique). */
  readonly name?: string;
  readonly overrides?: readonly Override[];
  readonly signal?: AbortSignal;
  readonly onProgress?: (turns: number) => void;
  /**
   * A directory for the re-run to play in, as a tracker (it must be new or empty; the registry's
   * tools must act on it): the recorded files are written there and file effects are compared
   * (WS-29). Absent: no file is written or captured, and file effects are not compared.
   */
  readonly workspace?: WorkspaceTracker;
}

export interface Divergence {
  /** What differs first. */
  readonly what: "reply" | "tool" | "arguments" | "status" | "observation" | "length" | "stop" | "files";
  readonly source: { readonly element: number | null; readonly event: EventId | null };
  readonly rerun: { readonly element: number | null; readonly event: EventId | null };
  readonly before: string;
  readonly after: string;
  readonly message: string;
  /** For `files`: the first path whose resulting file differs (`before`/`after` describe it on each side). */
  readonly path?: string;
}

export interface RerunReport {
  readonly branch: string;
  readonly forkedAt: EventId;
  readonly turns: number;
  readonly calls: number;
  readonly rerunSafe: number;
  readonly recordedNever: number;
  readonly stop: StopReason | undefined;
  readonly divergence: Divergence | undefined;
  /** Whether file effects were compared: a `workspace` was given and the recording records its files (WS-29). */
  readonly files: boolean;
  /**
   * The call the recording ends in the middle of (its last call, interrupted: the recorded process
   * stopped while it ran), when the re-run reached it: the re-run stops there too, the call
   * interrupted on both branches (RR-4).
   */
  readonly endedAt?: string;
}

interface RecordedCall {
  readonly el: Element;
  readonly id: string;
  readonly tool: string;
  readonly args: string;
  readonly status: string;
  readonly observation: string;
}

interface RecordedTurn {
  readonly el: Element;
  readonly text: string;
  /** What the model streamed as reasoning (AG-15): replayed, never compared. */
  readonly reasoning: string;
  readonly calls: readonly RecordedCall[];
  readonly usage: readonly [number, number] | undefined;
}

function textOf(el: Element, tag: string): string {
  return el.children.find((c) => c.tag === tag)?.text ?? "";
}

/**
 * The complete assistant turns of a tree, and its user turns with their position: `answered` when
 * a complete reply follows before the next user turn (a failed request, or input that more input
 * follows — an imported session's injected context — has none).
 */
function recording(
  tree: Tree,
  full: (hash: string) => string,
): { turns: RecordedTurn[]; users: { text: string; el: Element; answered: boolean }[]; stop: string | undefined } {
  const turns: RecordedTurn[] = [];
  const users: { text: string; el: Element; answered: boolean }[] = [];
  let stop: string | undefined;
  for (const el of bodyOf(tree).children) {
    if (el.tag === TAG.stop) stop = el.attrs[ATTR.reason];
    if (el.tag !== TAG.turn) continue;
    if (el.attrs[ATTR.role] === ROLE.user) users.push({ text: textOf(el, TAG.text), el, answered: false });
    if (el.attrs[ATTR.role] !== ROLE.assistant || el.attrs[ATTR.status] !== TURN.complete) continue;
    const asked = users.at(-1);
    if (asked !== undefined) asked.answered = true;
    const usage = el.children.find((c) => c.tag === TAG.usage);
    turns.push({
      el,
      text: textOf(el, TAG.text),
      reasoning: textOf(el, TAG.reasoning),
      usage: usage === undefined ? undefined : [Number(usage.attrs[ATTR.input] ?? 0), Number(usage.attrs[ATTR.output] ?? 0)],
      calls: el.children
        .filter((c) => c.tag === TAG.call)
        .map((c) => {
          const blob = c.children.find((d) => d.tag === TAG.diag && d.attrs[ATTR.kind] === DIAG.blob)?.attrs.hash;
          return {
            el: c,
            id: c.attrs[ATTR.id] ?? "",
            tool: c.attrs[ATTR.tool] ?? "",
            args: textOf(c, TAG.args),
            status: c.attrs[ATTR.status] ?? "",
            observation: blob !== undefined ? full(blob) : textOf(c, TAG.result),
          };
        }),
    });
  }
  return { turns, users, stop };
}

/** The blob hashes of the calls' full observations in `tree` (`<diag kind=blob hash>`): what {@link recording} reads. */
function observationBlobs(tree: Tree): string[] {
  const out: string[] = [];
  for (const el of bodyOf(tree).children) {
    if (el.tag !== TAG.turn) continue;
    for (const c of el.children) {
      if (c.tag !== TAG.call) continue;
      const hash = c.children.find((d) => d.tag === TAG.diag && d.attrs[ATTR.kind] === DIAG.blob)?.attrs.hash;
      if (hash !== undefined) out.push(hash);
    }
  }
  return out;
}

/**
 * {@link recording} of a branch's tree on either port: over the asynchronous one the tree is
 * loaded whole first, and the observations' blobs are fetched in one call per 500 either way.
 */
async function recordingOf(store: Port, tree: Tree): Promise<ReturnType<typeof recording>> {
  if (isAsyncStore(store)) await loadTree(tree);
  const blobs = await fetchBlobs(store, observationBlobs(tree));
  return recording(tree, (h) => blobs.text(h));
}

/** Replays recorded replies by turn number (assistant messages in the request), with overrides. */
class RecordedModel implements Model {
  constructor(
    readonly id: string,
    private readonly turns: readonly RecordedTurn[],
    private readonly llm: ReadonlyMap<string, string>,
  ) {}

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const n = request.messages.filter((m) => m.role === "assistant").length;
    const turn = this.turns[n];
    if (turn === undefined)
      throw new ModelError("protocol", `the recording has ${this.turns.length} model replies and the re-run asked for reply ${n + 1}`, {
        retryable: false,
      });
    signal.throwIfAborted();
    const replaced = turn.calls.map((c) => this.llm.get(c.id)).find((x) => x !== undefined);
    if (replaced !== undefined) {
      let parsed: { text?: string; toolCalls?: { name: string; arguments: unknown }[] };
      try {
        parsed = JSON.parse(replaced);
      } catch (e) {
        throw new EngineError(
          "bad-input",
          `an llm override is not JSON ({"text": …, "toolCalls": [{"name": …, "arguments": {…}}]}): ${(e as Error).message}`,
        );
      }
      if (parsed.text) yield { type: "text", delta: parsed.text };
      for (const [i, c] of (parsed.toolCalls ?? []).entries()) {
        yield { type: "tool-call", index: i, id: `${turn.calls[i]?.id ?? `override_${n}`}_${i}`, name: c.name };
        yield {
          type: "tool-arguments",
          index: i,
          // Iterative: an override is input of any depth.
          delta: typeof c.arguments === "string" ? c.arguments : canonicalJson(c.arguments ?? {}),
        };
      }
      yield { type: "done", finishReason: (parsed.toolCalls ?? []).length > 0 ? "tool_calls" : "stop" };
      return;
    }
    if (turn.reasoning !== "") yield { type: "reasoning", delta: turn.reasoning };
    if (turn.text !== "") yield { type: "text", delta: turn.text };
    for (const [i, c] of turn.calls.entries()) {
      yield { type: "tool-call", index: i, id: c.id, name: c.tool };
      if (c.args !== "") yield { type: "tool-arguments", index: i, delta: c.args };
    }
    if (turn.usage !== undefined) yield { type: "usage", inputTokens: turn.usage[0], outputTokens: turn.usage[1] };
    yield { type: "done", finishReason: turn.calls.length > 0 ? "tool_calls" : "stop" };
  }
}

/** Safe tools run for real; never tools answer with their recorded outcome; overrides win. */
class ReplayExecutor implements Executor {
  #next = 0;
  rerunSafe = 0;
  recordedNever = 0;
  /** The id of the recording's last call, when the recording ends while it ran (see `RerunReport.endedAt`). */
  endedAt: string | undefined;
  constructor(
    private readonly registry: ToolRegistry,
    private readonly calls: readonly RecordedCall[],
    private readonly tool: ReadonlyMap<string, string>,
    /** Writes a recorded call's file changes into the re-run's directory, before its recorded outcome is returned. */
    private readonly replayFiles: (call: RecordedCall) => Promise<void> = async () => {},
    /** Stops the re-run's loop (its signal): the recording ends in the middle of the call being answered. */
    private readonly endRecording: () => void = () => {},
  ) {}

  async execute(action: Action, signal: AbortSignal, ctx?: Omit<ToolContext, "signal">): Promise<ActionOutcome> {
    const recorded = this.calls[this.#next++];
    if (recorded !== undefined && this.tool.has(recorded.id)) return outcome(CALL.executed, this.tool.get(recorded.id) as string);
    const spec = action.kind === "tool-call" ? this.registry.get(action.call.name) : undefined;
    if (spec?.replayPolicy === "safe") {
      this.rerunSafe++;
      return this.registry.executor().execute(action, signal, ctx);
    }
    if (recorded === undefined || action.kind !== "tool-call" || recorded.tool !== action.call.name)
      return outcome(
        CALL.envError,
        `the re-run reached a call to ${action.kind === "tool-call" ? action.call.name : "code"} that the recording does not have, and it is not safe to run`,
      );
    this.recordedNever++;
    await this.replayFiles(recorded);
    if (recorded.status === CALL.interrupted && this.#next === this.calls.length) {
      // The recording ends here: its process stopped while this call ran. The re-run stops the
      // same way — the loop's signal aborts during the call, which the loop records as
      // interrupted — instead of inventing an outcome the recording never had (RR-4).
      this.endedAt = recorded.id;
      this.endRecording();
      await new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    if (recorded.status === CALL.executed || recorded.status === CALL.notExecuted || recorded.status === CALL.envError)
      return outcome(recorded.status, recorded.observation);
    return outcome(CALL.envError, `the recorded call was ${recorded.status}; a tool that is not safe to repeat is not re-executed`);
  }
}

/** The event of `log` that wrote element `el` last with one of `labels` (the outcome of a call, say). */
function eventOf(log: readonly EventMeta[], el: Element | undefined, labels: readonly string[]): EventId | null {
  if (el === undefined) return null;
  const hit = log.findLast((e) => e.by === byCall(el.id) && labels.includes(e.label ?? ""));
  return hit?.id ?? null;
}

/**
 * Re-runs `session`'s branch on a new branch and reports the first divergence (none: the re-run
 * reproduced every reply and observation). The session object is left on its branch. Either port
 * (decision 0038): over the asynchronous one the branch's tree is loaded whole, as a re-run reads
 * all of it.
 */
export async function rerun(session: AnySession, options: RerunOptions): Promise<RerunReport> {
  const store = session.store;
  const source = await recordingOf(store, session.durableTree);
  if (source.users.length === 0)
    throw new EngineError("bad-input", `branch ${session.branch} of session ${session.id} has no user turn to re-run from`);
  const sourceLog = await session.log();
  const firstUser = sourceLog.find((e) => e.label === LABEL.turnUser);
  if (firstUser?.prior === null || firstUser === undefined)
    throw new EngineError("bad-input", "cannot find the event that started the first user turn");
  const forkedAt = firstUser.prior as EventId;
  const overrides = options.overrides ?? [];
  const known = new Set(source.turns.flatMap((t) => t.calls.map((c) => c.id)));
  for (const o of overrides)
    if (!known.has(o.callId))
      throw new EngineError(
        "bad-input",
        `no call with id ${o.callId} on branch ${session.branch}; \`strata show SESSION --select call\` lists them`,
      );
  const ws = options.workspace;
  // What the recording did to the files, and the files the re-run starts from (WS-29).
  const sourceFiles = ws === undefined ? undefined : await lineFiles(store, session.head.id, forkedAt);
  const initial = sourceFiles === undefined ? undefined : startingFiles(await session.at(forkedAt), sourceFiles);
  if (ws !== undefined) await prepareDirectory(ws, initial, store);
  const name = await session.freeBranchName(options.name ?? `${overrides.length > 0 ? "whatif" : "rerun"}/${session.branch}`);
  // Every override's content is stored before the commit that names it.
  const hashes: string[] = [];
  for (const o of overrides) hashes.push(await store.putBlob(o.content));
  const fork = await session.fork(forkedAt, { name });
  await fork.commit(
    (d) => {
      const rec = d.appendChild(metaOf(d.tree).id, {
        tag: META.rerun,
        attrs: { of: session.branch, at: String(forkedAt), head: String(session.head.id) },
      });
      for (const [i, o] of overrides.entries())
        d.appendChild(rec, { tag: META.override, attrs: { target: `${o.kind}:${o.callId}`, hash: hashes[i] as string } });
    },
    { label: overrides.length > 0 ? LABEL.counterfactual : LABEL.rerun },
  );
  const model = new RecordedModel(
    session.durableTree.get(bodyOf(session.durableTree).id)?.children.find((t) => t.attrs[ATTR.model] !== undefined)?.attrs[ATTR.model] ??
      "recorded:replay",
    source.turns,
    new Map(overrides.filter((o) => o.kind === "llm").map((o) => [o.callId, o.content])),
  );
  const toolOverrides = new Map(overrides.filter((o) => o.kind === "tool").map((o) => [o.callId, o.content]));
  // Aborted when the re-run reaches the call the recording ends in the middle of (RR-4).
  const ended = new AbortController();
  const signal = options.signal === undefined ? ended.signal : AbortSignal.any([options.signal, ended.signal]);
  const executor = new ReplayExecutor(
    options.registry,
    source.turns.flatMap((t) => t.calls),
    toolOverrides,
    async (call) => {
      // The recorded outcome comes with the recorded files: the directory goes from the call's before to its after.
      const rec = sourceFiles?.calls.get(call.el.id);
      if (ws !== undefined && rec !== undefined) await checkoutWorkspace(rec.after, ws.root, store, { from: rec.before });
    },
    () => ended.abort(new Error("the recording ends here")),
  );

  let stop: StopReason | undefined;
  let replies = 0;
  for (const user of source.users) {
    if (!user.answered) {
      // No recorded reply to ask for: the turn is written as it was, without asking the model (RR-1).
      await startRun(fork, { model, registry: options.registry, executor, task: user.text, limits: { maxSteps: source.turns.length + 1 } });
      continue;
    }
    const r = await runAgent(fork, {
      model,
      registry: options.registry,
      executor,
      task: user.text,
      limits: { maxSteps: source.turns.length + 1 },
      signal,
      ...(ws !== undefined ? { workspace: ws } : {}),
      onEvent: (e) => {
        // The fork starts before the first user turn: its assistant turns are the ones this loop made.
        if (e.type === "turn" && e.role === ROLE.assistant) options.onProgress?.(++replies);
      },
    });
    stop = r.stop;
    if (!FINAL_STOPS.has(r.stop)) break;
  }
  const again = await recordingOf(store, fork.durableTree);
  const files = sourceFiles?.recorded === true ? { source: sourceFiles, rerun: await lineFiles(store, fork.head.id, forkedAt) } : undefined;
  // The depths compare needs of the baselines and of the recording's settle events, read before it.
  const depths = new Map<EventId, number>();
  const baselineEvent = files?.source.baseline?.event;
  if (baselineEvent !== undefined) {
    const m = await store.eventMeta(baselineEvent);
    if (m !== undefined) depths.set(m.id, m.depth);
  }
  for (const e of sourceLog) depths.set(e.id, e.depth);
  const divergence = compare(
    { branch: session.branch, log: sourceLog },
    { branch: fork.branch, log: await fork.log() },
    source,
    again,
    files,
    depths,
  );
  const report: RerunReport = {
    branch: fork.branch,
    forkedAt,
    turns: again.turns.length,
    calls: again.turns.reduce((n, t) => n + t.calls.length, 0),
    rerunSafe: executor.rerunSafe,
    recordedNever: executor.recordedNever,
    stop,
    divergence,
    files: files !== undefined,
    ...(executor.endedAt === undefined ? {} : { endedAt: executor.endedAt }),
  };
  await fork.close();
  return report;
}

/** A branch as compared: its name and its history. */
interface Line {
  readonly branch: string;
  readonly log: readonly EventMeta[];
}

function compare(
  session: Line,
  fork: Line,
  a: ReturnType<typeof recording>,
  b: ReturnType<typeof recording>,
  files: FilePair | undefined,
  /** Depths of the recording's events (its log) and of its baseline event. */
  depths: ReadonlyMap<EventId, number>,
): Divergence | undefined {
  const at = (x: Element | undefined, s: Line, labels: readonly string[]) => ({ element: x?.id ?? null, event: eventOf(s.log, x, labels) });
  // The baselines are compared where the recording took its own: before the first call it settled after it.
  const baselineDepth = files?.source.baseline === undefined ? undefined : depths.get(files.source.baseline.event);
  let baselineDone = files === undefined;
  const checkBaseline = (settled: EventId | null): Divergence | undefined => {
    if (baselineDone || files === undefined) return undefined;
    const depth = settled === null ? undefined : depths.get(settled);
    if (settled !== null && (baselineDepth === undefined || depth === undefined || depth < baselineDepth)) return undefined;
    baselineDone = true;
    return baselineDivergence(session, files);
  };
  for (let i = 0; i < Math.max(a.turns.length, b.turns.length); i++) {
    const ta = a.turns[i];
    const tb = b.turns[i];
    if (ta === undefined || tb === undefined)
      return {
        what: "length",
        source: at(ta?.el, session, [LABEL.turnEnd]),
        rerun: at(tb?.el, fork, [LABEL.turnEnd]),
        before: String(a.turns.length),
        after: String(b.turns.length),
        message: `the recording has ${a.turns.length} model replies, the re-run ${b.turns.length}`,
      };
    if (ta.text !== tb.text || ta.calls.length !== tb.calls.length)
      return {
        what: "reply",
        source: { element: ta.el.id, event: null },
        rerun: { element: tb.el.id, event: null },
        before: `${ta.text} (${ta.calls.length} calls)`,
        after: `${tb.text} (${tb.calls.length} calls)`,
        message: `model reply ${i + 1} differs`,
      };
    for (let j = 0; j < ta.calls.length; j++) {
      const ca = ta.calls[j] as RecordedCall;
      const cb = tb.calls[j] as RecordedCall;
      const where = {
        source: at(ca.el, session, [LABEL.callOutcome, LABEL.callInterrupted]),
        rerun: at(cb.el, fork, [LABEL.callOutcome, LABEL.callInterrupted]),
      };
      if (ca.tool !== cb.tool)
        return { what: "tool", ...where, before: ca.tool, after: cb.tool, message: `call ${ca.id}: a different tool` };
      if (ca.args !== cb.args)
        return { what: "arguments", ...where, before: ca.args, after: cb.args, message: `call ${ca.id}: different arguments` };
      if (ca.status !== cb.status)
        return {
          what: "status",
          ...where,
          before: ca.status,
          after: cb.status,
          message: `call ${ca.id} (${ca.tool}): ${ca.status} in the recording, ${cb.status} in the re-run`,
        };
      const early = checkBaseline(where.source.event);
      if (early !== undefined) return early;
      if (ca.observation !== cb.observation)
        return {
          what: "observation",
          ...where,
          before: ca.observation,
          after: cb.observation,
          message: `call ${ca.id} (${ca.tool}) observed something different`,
        };
      const diff =
        files === undefined
          ? undefined
          : firstFileDifference(files.source.calls.get(ca.el.id)?.changes ?? [], files.rerun.calls.get(cb.el.id)?.changes ?? []);
      if (diff !== undefined)
        return {
          what: "files",
          ...where,
          path: diff.path,
          before: diff.before,
          after: diff.after,
          message: `call ${ca.id} (${ca.tool}) left ${diff.path} different: ${diff.before} in the recording, ${diff.after} in the re-run`,
        };
    }
  }
  const late = checkBaseline(null);
  if (late !== undefined) return late;
  // A recording with no stop of its own (an imported session) has none to compare.
  if (a.stop !== undefined && a.stop !== b.stop)
    return {
      what: "stop",
      source: { element: null, event: null },
      rerun: { element: null, event: null },
      before: a.stop ?? "(none)",
      after: b.stop ?? "(none)",
      message: `the run stopped differently: ${a.stop} → ${b.stop}`,
    };
  return undefined;
}
