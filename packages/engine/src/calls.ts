/**
 * One call's execution under the central limits (AG-7, AG-8): a time limit (the handler's signal
 * aborts; a handler that ignores it is abandoned after a grace period), progress streamed into
 * `<output>` up to an inline cap, and the observation bounded — beyond `inlineChars` it goes to a
 * blob with a `<diag>`, beyond `maxOutputChars` it is dropped and counted. Outcomes, not
 * exceptions: a timeout is an `executed` TimeoutError, an executor that throws an `env_error`.
 */
import type { NodeId } from "@strata/dom";
import type { Session } from "./session.ts";
import type { StreamWriter } from "./stream.ts";
import { type Action, type ActionOutcome, type CallLimits, type Executor, outcome, type TreeEdit } from "./tools/registry.ts";

export interface Diag {
  readonly kind: string;
  readonly attrs?: Record<string, string>;
  readonly text: string;
}

/** A call's progress stream into `<output>`, bounded to `cap` characters inline (AG-10). */
export class Progress {
  #stream: StreamWriter | undefined;
  #written = 0;
  #dropped = 0;
  #closed = false;

  constructor(
    readonly session: Session,
    readonly call: NodeId,
    readonly cap: number,
  ) {}

  write(chunk: string): void {
    if (this.#closed || typeof chunk !== "string" || chunk === "") return;
    const room = this.cap - this.#written;
    if (room <= 0) {
      this.#dropped += chunk.length;
      return;
    }
    if (this.#stream === undefined) {
      let output = 0 as NodeId;
      this.session.commit((d) => void (output = d.appendChild(this.call, { tag: "output" })), { label: "call.output" });
      this.#stream = this.session.stream(output, { label: "call.output" });
    }
    const part = chunk.length > room ? chunk.slice(0, room) : chunk;
    this.#dropped += chunk.length - part.length;
    this.#written += part.length;
    this.#stream.append(part);
  }

  close(): void {
    this.#closed = true;
    this.#stream?.close();
  }

  diags(): Diag[] {
    return this.#dropped > 0
      ? [
          {
            kind: "output-truncated",
            attrs: { dropped: String(this.#dropped) },
            text: `progress beyond ${this.cap} characters was not kept (${this.#dropped} dropped)`,
          },
        ]
      : [];
  }
}

function sleep(ms: number): Promise<"timeout"> {
  return new Promise((resolve) => setTimeout(() => resolve("timeout"), ms).unref?.());
}

/**
 * Runs `action` through `executor` under `limits`, streaming progress into the call's `<output>`
 * and collecting the tree edits it stages. Returns the outcome with its diagnostics, or
 * `cancelled` (with the diagnostics so far) when the run's own signal aborted.
 */
export async function executeBounded(
  session: Session,
  element: NodeId,
  executor: Executor,
  action: Action,
  run: AbortSignal,
  limits: CallLimits,
): Promise<{ outcome: ActionOutcome; staged: TreeEdit[]; diags: Diag[] } | { cancelled: true; diags: Diag[] }> {
  const staged: TreeEdit[] = [];
  const progress = new Progress(session, element, limits.inlineChars);
  const timeout = new AbortController();
  const signal = AbortSignal.any([run, timeout.signal]);
  const timer = setTimeout(() => timeout.abort(), limits.timeoutMs);
  const running = executor
    .execute(action, signal, { output: (chunk) => progress.write(chunk), stage: (edit) => void staged.push(edit) })
    .then(
      (o) => ({ outcome: o }),
      (error: unknown) => ({ error }),
    );
  const settled = await Promise.race([
    running,
    new Promise<"aborted">((resolve) => signal.addEventListener("abort", () => resolve("aborted"), { once: true })),
  ]).then((r) => (r === "aborted" ? Promise.race([running, sleep(limits.graceMs)]) : r));
  clearTimeout(timer);
  progress.close();
  const diags = progress.diags();
  if (settled === "timeout" || ("error" in settled && signal.aborted)) {
    if (run.aborted) return { cancelled: true, diags };
    const abandoned = settled === "timeout";
    const note = abandoned
      ? `the handler ignored the abort and was abandoned ${limits.graceMs} ms after its ${limits.timeoutMs} ms time limit`
      : `the call did not finish within its ${limits.timeoutMs} ms time limit and was stopped`;
    diags.push({ kind: abandoned ? "abandoned" : "timeout", text: note });
    return { outcome: outcome("executed", `TimeoutError: ${note}`, false, "TimeoutError"), staged, diags };
  }
  if ("error" in settled) {
    // An executor that throws (not the registry's: it never does) is an environment failure.
    const e = settled.error as Error;
    return { outcome: outcome("env_error", `${e?.name ?? "Error"}: ${e?.message ?? String(e)}`), staged, diags };
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
      kind: "blob",
      attrs: { hash, chars: String(kept.length) },
      text: `the observation is ${kept.length} characters; ${limits.inlineChars} are inline`,
    });
  }
  if (dropped > 0)
    diags.push({
      kind: "output-cap",
      attrs: { dropped: String(dropped) },
      text: `${dropped} characters beyond the ${limits.maxOutputChars}-character cap were dropped`,
    });
  return inline;
}
