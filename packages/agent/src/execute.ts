/**
 * One call's execution under the central limits (AG-7, AG-8): a time limit (the handler's signal
 * aborts; a handler that ignores it is abandoned after a grace period), progress streamed into
 * `<output>` up to an inline cap, and the observation bounded — beyond `inlineChars` it goes to a
 * blob with a `<diag>`, beyond `maxOutputChars` it is dropped and counted. Outcomes, not
 * exceptions: a timeout is an `executed` TimeoutError, an executor that throws an `env_error`.
 */
import { sanitizeText as clean, type NodeId, type TreeDraft } from "@strata/dom";
import type { StreamWriter } from "@strata/engine";
import { isAsyncStore } from "@strata/store";
import type { AnySession } from "./port.ts";
import { type Action, type ActionOutcome, type CallLimits, type Executor, outcome, type TreeEdit } from "./tools/registry.ts";
import { ATTR, CALL, DIAG, type DiagKind, LABEL, TAG } from "./vocabulary.ts";

/** A diagnostic for a call's `<diag>`: what the loop noted beside the observation. */
export interface Diag {
  readonly kind: DiagKind;
  readonly attrs?: Record<string, string>;
  readonly text: string;
}

/** Appends each diagnostic as a `<diag kind …>` child of `parent` (a call, or `<workspace>`). */
export function appendDiags(d: TreeDraft, parent: NodeId, diags: readonly Diag[]): void {
  for (const g of diags) d.appendChild(parent, { tag: TAG.diag, attrs: { [ATTR.kind]: g.kind, ...g.attrs }, text: clean(g.text) });
}

/**
 * A call's progress stream into `<output>`, bounded to `cap` characters inline (AG-7). It never
 * throws at the tool that writes (a handler's output callback may run in an event listener, where
 * an exception would be uncaught): when the log refuses a write — a moved head, a full disk — it
 * stops taking output, keeps the error (`failure`) and calls `onFailure`, which stops the call.
 */
export class Progress {
  #stream: StreamWriter | undefined;
  /** Over the asynchronous port: the commit of `<output>` under way, and what was written before it landed. */
  #opening: Promise<void> | undefined;
  #early = "";
  #written = 0;
  #dropped = 0;
  #closed = false;
  #failure: { error: unknown } | undefined;

  constructor(
    readonly session: AnySession,
    readonly call: NodeId,
    readonly cap: number,
    private readonly onFailure: (error: unknown) => void = () => {},
  ) {}

  /** The first write the log refused, if any (the call must not go on: AG-18). */
  get failure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  write(chunk: string): void {
    if (this.#closed || typeof chunk !== "string" || chunk === "") return;
    const room = this.cap - this.#written;
    if (room <= 0) {
      this.#dropped += chunk.length;
      return;
    }
    const part = chunk.length > room ? chunk.slice(0, room) : chunk;
    try {
      if (this.#stream === undefined && this.#opening === undefined) this.#open();
      if (this.#stream === undefined) this.#early += part;
      else this.#stream.append(part);
    } catch (error) {
      this.#fail(error);
      return;
    }
    this.#dropped += chunk.length - part.length;
    this.#written += part.length;
    // A flush on the stream's timer that the log refused shows here, at the next write.
    const late = this.#stream?.lastError ?? this.#stream?.endedBy;
    if (late !== undefined) this.#fail(late);
  }

  /**
   * Commits `<output>` and opens its stream: at once over a synchronous store; over the
   * asynchronous port when the commit lands (what is written meanwhile goes in first).
   */
  #open(): void {
    let output = 0 as NodeId;
    const made = this.session.commit((d) => void (output = d.appendChild(this.call, { tag: TAG.output })), { label: LABEL.callOutput });
    const opened = (): void => {
      this.#stream = this.session.stream(output, { label: LABEL.callOutput });
      if (this.#early !== "") this.#stream.append(this.#early);
      this.#early = "";
    };
    if (!(made instanceof Promise)) {
      opened();
      return;
    }
    this.#opening = made.then(opened).catch((error: unknown) => this.#fail(error));
  }

  /**
   * Flushes what is pending and ends the stream; a flush the log refuses is kept as `failure`.
   * Over the asynchronous port it answers once the output is durable.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#opening;
    try {
      this.#stream?.close();
      if (this.#stream !== undefined && isAsyncStore(this.session.store)) await this.session.flush();
      // Ended by a refused flush (its text dropped): the call must not settle as if it was kept.
      if (this.#stream?.endedBy !== undefined) throw this.#stream.endedBy;
    } catch (error) {
      this.#failure ??= { error };
    }
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.#closed = true;
    try {
      this.onFailure(error);
    } catch {
      // stopping the call is best effort; the failure is reported either way
    }
  }

  diags(): Diag[] {
    return this.#dropped > 0
      ? [
          {
            kind: DIAG.outputTruncated,
            attrs: { dropped: String(this.#dropped) },
            text: `progress beyond ${this.cap} characters was not kept (${this.#dropped} dropped)`,
          },
        ]
      : [];
  }
}

/**
 * A call's key (ToolContext.key): its session and its element. Attempts of a call share the
 * element; every call the model makes gets an element of its own, and ids are never reused in a
 * session, on any branch (L5).
 */
export function callKey(session: string, element: NodeId): string {
  return `${session}.${element}`;
}

function sleep(ms: number): Promise<"timeout"> {
  return new Promise((resolve) => setTimeout(() => resolve("timeout"), ms).unref?.());
}

/**
 * Runs `action` through `executor` under `limits`, streaming progress into the call's `<output>`
 * and collecting the tree edits it stages. Returns the outcome with its diagnostics, `cancelled`
 * (with the diagnostics so far) when the run's own signal aborted, or `failed` when the log
 * refused the call's progress (the call is stopped, and the run must end with that error: AG-18).
 */
export async function executeBounded(
  session: AnySession,
  element: NodeId,
  executor: Executor,
  action: Action,
  run: AbortSignal,
  limits: CallLimits,
): Promise<
  { outcome: ActionOutcome; staged: TreeEdit[]; diags: Diag[] } | { cancelled: true; diags: Diag[] } | { failed: { error: unknown } }
> {
  const staged: TreeEdit[] = [];
  const refused = new AbortController();
  const progress = new Progress(session, element, limits.inlineChars, () => refused.abort());
  const timeout = new AbortController();
  const signal = AbortSignal.any([run, timeout.signal, refused.signal]);
  const timer = setTimeout(() => timeout.abort(), limits.timeoutMs);
  const running = executor
    .execute(action, signal, {
      key: callKey(session.id, element),
      output: (chunk) => progress.write(chunk),
      stage: (edit) => void staged.push(edit),
    })
    .then(
      (o) => ({ outcome: o }),
      (error: unknown) => ({ error }),
    );
  const settled = await Promise.race([
    running,
    new Promise<"aborted">((resolve) => signal.addEventListener("abort", () => resolve("aborted"), { once: true })),
  ]).then((r) => (r === "aborted" ? Promise.race([running, sleep(limits.graceMs)]) : r));
  clearTimeout(timer);
  await progress.close();
  // Whatever the handler did, a call whose progress the log refused does not settle here.
  if (progress.failure !== undefined) return { failed: progress.failure };
  const diags = progress.diags();
  if (settled === "timeout" || ("error" in settled && signal.aborted)) {
    if (run.aborted) return { cancelled: true, diags };
    const abandoned = settled === "timeout";
    const note = abandoned
      ? `the handler ignored the abort and was abandoned ${limits.graceMs} ms after its ${limits.timeoutMs} ms time limit`
      : `the call did not finish within its ${limits.timeoutMs} ms time limit and was stopped`;
    diags.push({ kind: abandoned ? DIAG.abandoned : DIAG.timeout, text: note });
    return { outcome: outcome(CALL.executed, `TimeoutError: ${note}`, false, "TimeoutError"), staged, diags };
  }
  if ("error" in settled) {
    // An executor that throws (not the registry's: it never does) is an environment failure.
    const e = settled.error as Error;
    return { outcome: outcome(CALL.envError, `${e?.name ?? "Error"}: ${e?.message ?? String(e)}`), staged, diags };
  }
  return { outcome: settled.outcome, staged, diags };
}

/**
 * The observation as it goes inline into `<result>`: cut to `maxOutputChars` (the rest dropped
 * and counted) and, beyond `inlineChars`, stored whole as a blob with a notice and a `<diag>`.
 */
export function boundObservation(observation: string, limits: CallLimits, putBlob: (text: string) => string, diags: Diag[]): string {
  let kept = observation;
  const dropped = Math.max(0, observation.length - limits.maxOutputChars);
  if (dropped > 0) kept = observation.slice(0, limits.maxOutputChars);
  let inline = kept;
  if (kept.length > limits.inlineChars) {
    const hash = putBlob(kept);
    inline = `${kept.slice(0, limits.inlineChars)}\n[… ${kept.length - limits.inlineChars} more characters not shown; the full output is stored as blob ${hash.slice(0, 16)}]`;
    diags.push({
      kind: DIAG.blob,
      attrs: { hash, chars: String(kept.length) },
      text: `the observation is ${kept.length} characters; ${limits.inlineChars} are inline`,
    });
  }
  if (dropped > 0)
    diags.push({
      kind: DIAG.outputCap,
      attrs: { dropped: String(dropped) },
      text: `${dropped} characters beyond the ${limits.maxOutputChars}-character cap were dropped`,
    });
  return inline;
}
