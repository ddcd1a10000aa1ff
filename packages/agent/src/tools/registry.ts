/**
 * The tool registry, with the seed's semantics in TypeScript (TL-1 … TL-7; seed
 * `000_b71e54f4809aaa02.txt`, decisions one to four). A tool is a value — name, description, JSON
 * Schema, replay policy, completes-run flag, handler — and the handler travels with its spec, so
 * narrowing a registry can never leave a visible tool without its implementation.
 */
import { createHash } from "node:crypto";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { CALL, type OutcomeStatus } from "../vocabulary.ts";
import { canonicalJson } from "./canonical.ts";

export type { OutcomeStatus } from "../vocabulary.ts";

/** A tool's answer to "may I run twice?": `safe` re-runs after a crash, `never` becomes interrupted. */
export type ReplayPolicy = "safe" | "never";

/** What a handler may use besides its arguments. It never sees the call object. */
export interface ToolContext {
  readonly signal: AbortSignal;
  /**
   * The call's key (TL-6, decision 0034): the same for every attempt of this call — a safe call
   * re-run after a crash gets the key its first attempt got — and different for every other call
   * of any session. A tool whose effect is outside the workspace (a message sent, a ticket opened)
   * passes it to that service as its idempotency key, so a re-run does not do it twice. Opaque:
   * compare it, store it, do not parse it. Given by the agent loop; undefined for a handler called
   * some other way.
   */
  readonly key?: string;
  /** Streams progress into the call's `<output>` (bounded by the call limits). */
  readonly output?: (chunk: string) => void;
  /** Stages a change to the session tree, committed atomically with this call's outcome (and
   * dropped if the call does not end in `executed`). The `todo` tool rewrites `<meta><todo>` so. */
  readonly stage?: (change: TreeEdit) => void;
}

/** A tree change a tool stages: a recipe over a draft of the session tree (see `Session.commit`). */
export type TreeEdit = (draft: import("@strata/dom").TreeDraft) => void;

export type ToolHandler = (args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

/** Per-call limits; any field a spec leaves out comes from the run's limits. */
export interface CallLimits {
  /** Wall time before the call's signal aborts (default 120 000 ms). */
  readonly timeoutMs: number;
  /** After the abort, how long a handler that ignores it is waited for (default 2 000 ms). */
  readonly graceMs: number;
  /** Observation and progress characters kept inline in the tree; the rest goes to a blob (16 384). */
  readonly inlineChars: number;
  /** Characters of an observation kept at all (default 8 MiB); the rest is dropped and counted. */
  readonly maxOutputChars: number;
}

export const DEFAULT_CALL_LIMITS: CallLimits = { timeoutMs: 120_000, graceMs: 2_000, inlineChars: 16_384, maxOutputChars: 8 * 1024 * 1024 };

/** A tool. Fields are only ever appended (the seed's decision one). */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema (draft 2020-12) of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly replayPolicy?: ReplayPolicy;
  readonly completesRun?: boolean;
  readonly handler?: ToolHandler;
  /** Recorded in the roster; bump it when the tool's behaviour changes. */
  readonly version?: string;
  readonly limits?: Partial<CallLimits>;
  /**
   * What the tool may change besides the tree: `"workspace"` for a tool that may change files of
   * the workspace (the built-in `write_file`, `edit_file` and `run`: a shell command can touch
   * anything). A run given a `WorkspaceTracker` records the baseline before the first such call
   * starts and captures the files after each, with its outcome (WS-20 … WS-22). Not part of the
   * recorded roster. Absent: the tool changes no file (a capture after it would find nothing).
   */
  readonly effects?: ToolEffects;
  /**
   * What the model writes as the call's arguments: `"json"` (the default), a JSON object checked
   * against `parameters`; `"text"`, free text — a custom tool's input, such as Codex's
   * `apply_patch` patch — handed to the handler as `{ input: TEXT }` and checked against nothing.
   * Not part of the recorded roster.
   */
  readonly input?: "json" | "text";
}

/** What a tool may change outside the tree (`ToolSpec.effects`). */
export type ToolEffects = "workspace";

/** One tool call as the model wrote it. */
export interface ToolCall {
  readonly name: string;
  /** JSON text as the model streamed it, or an already parsed object. */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** What the model produced in one step: a tool call, or code for an interpreter environment. */
export type Action = { readonly kind: "tool-call"; readonly call: ToolCall } | { readonly kind: "code"; readonly code: string };

export type Validation =
  | { readonly ok: true; readonly spec: ToolSpec; readonly args: Record<string, unknown> }
  | { readonly ok: false; readonly reason: "unknown-tool" | "bad-json" | "schema"; readonly message: string };

/** The seed's action outcome; fields are only ever appended. */
export interface ActionOutcome {
  readonly status: OutcomeStatus;
  /** The text for the model's history (for not_executed/env_error the loop substitutes the
   * recorded `SyntheticObservations`; this text is kept for audit). */
  readonly observation: string;
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
  /** When the handler threw an ordinary exception: its class name (the call still `executed`). */
  readonly errorClass?: string;
}

/**
 * An outcome of the registry-derived path: no environment completion, nothing truncated. The one
 * factory of outcomes (the executor, the loop's call limits and re-runs use it).
 */
export function outcome(status: OutcomeStatus, observation: string, synthetic = false, errorClass?: string): ActionOutcome {
  return {
    status,
    observation,
    observationIsSynthetic: synthetic,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
    ...(errorClass !== undefined ? { errorClass } : {}),
  };
}

/** The outcome of a call that fails validation: nothing ran (the seed table's row); the reason is the validator's. */
export function refusedOutcome(tool: string, message: string): ActionOutcome {
  return outcome(CALL.notExecuted, `The call to ${tool} was not executed: ${message}.`, true);
}

/** Thrown by a handler to say "the environment is broken", as opposed to "the tool failed". */
export class ToolEnvironmentError extends Error {
  override readonly name: string = "ToolEnvironmentError";
}

/** Misuse of the registry (duplicate names, bad schemas, missing handlers, unknown names). */
export class ToolRegistryError extends Error {
  override readonly name = "ToolRegistryError";
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The hash the roster records for a schema or description: sha256 of its canonical JSON / bytes. */
export function contentHash(value: unknown): string {
  return createHash("sha256")
    .update(typeof value === "string" ? value : canonicalJson(value))
    .digest("hex");
}

export { canonicalJson };

function describe(errors: ValidateFunction["errors"]): string {
  return (errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath === "" ? "the arguments" : `\`${e.instancePath.slice(1).replaceAll("/", ".")}\``} ${e.message ?? "is invalid"}${e.keyword === "additionalProperties" ? ` (\`${(e.params as { additionalProperty?: string }).additionalProperty}\`)` : ""}`,
    )
    .join("; ");
}

export class ToolRegistry {
  readonly #specs: Map<string, ToolSpec>;
  readonly #validators = new Map<string, ValidateFunction>();

  /** Fails at once on a duplicate or malformed name, or a schema that does not compile. */
  constructor(specs: readonly ToolSpec[]) {
    this.#specs = new Map();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const spec of specs) {
      if (!NAME.test(spec.name)) throw new ToolRegistryError(`tool name ${JSON.stringify(spec.name)} must be 1–64 letters, digits, _ or -`);
      if (this.#specs.has(spec.name)) throw new ToolRegistryError(`two tools are named ${spec.name}`);
      if (spec.replayPolicy !== undefined && spec.replayPolicy !== "safe" && spec.replayPolicy !== "never")
        throw new ToolRegistryError(`tool ${spec.name}: replayPolicy must be "safe" or "never"`);
      if (spec.effects !== undefined && spec.effects !== "workspace")
        throw new ToolRegistryError(
          `tool ${spec.name}: effects must be "workspace" (the tool may change files) or left out, not ${JSON.stringify(spec.effects)}`,
        );
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(spec.parameters);
      } catch (e) {
        throw new ToolRegistryError(`tool ${spec.name}: its parameters are not a valid JSON Schema: ${(e as Error).message}`);
      }
      this.#specs.set(spec.name, Object.freeze({ ...spec }));
      this.#validators.set(spec.name, validate);
    }
  }

  get(name: string): ToolSpec | undefined {
    return this.#specs.get(name);
  }

  /** The specs in registration order. */
  list(): ToolSpec[] {
    return [...this.#specs.values()];
  }

  /** Checks a call against the roster: unknown tool, arguments that are not a JSON object, schema. */
  validate(call: ToolCall): Validation {
    const spec = this.#specs.get(call.name);
    if (spec === undefined)
      return {
        ok: false,
        reason: "unknown-tool",
        message: `there is no tool named ${JSON.stringify(call.name)}; the tools are: ${[...this.#specs.keys()].join(", ") || "(none)"}`,
      };
    let args: unknown = call.arguments;
    if (spec.input === "text") return { ok: true, spec, args: { input: typeof args === "string" ? args : JSON.stringify(args) } };
    if (typeof args === "string") {
      try {
        args = args.trim() === "" ? {} : JSON.parse(args);
      } catch (e) {
        return { ok: false, reason: "bad-json", message: `the arguments are not valid JSON (${(e as Error).message})` };
      }
    }
    if (args === null || typeof args !== "object" || Array.isArray(args))
      return { ok: false, reason: "bad-json", message: "the arguments must be a JSON object" };
    const validate = this.#validators.get(call.name) as ValidateFunction;
    if (!validate(args))
      return {
        ok: false,
        reason: "schema",
        message: `the arguments do not match the schema of ${call.name}: ${describe(validate.errors)}`,
      };
    return { ok: true, spec, args: args as Record<string, unknown> };
  }

  /** A new registry of the named tools (handlers travel with their specs); this one is unchanged. */
  restrictTo(names: Iterable<string>): ToolRegistry {
    const picked: ToolSpec[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const spec = this.#specs.get(name);
      if (spec === undefined) unknown.push(name);
      else if (!picked.includes(spec)) picked.push(spec);
    }
    if (unknown.length > 0)
      throw new ToolRegistryError(`restrictTo: no tool named ${unknown.join(", ")}; the tools are: ${[...this.#specs.keys()].join(", ")}`);
    return new ToolRegistry(picked);
  }

  /** An executor over this registry; throws at once naming every spec without a handler. */
  executor(): RegistryExecutor {
    const missing = this.list()
      .filter((s) => s.handler === undefined)
      .map((s) => s.name);
    if (missing.length > 0) throw new ToolRegistryError(`these tools have no handler, so they cannot be executed: ${missing.join(", ")}`);
    return new RegistryExecutor(this);
  }

  /** Whether two registries expose the same tools (same names and the same spec objects). */
  sameAs(other: ToolRegistry): boolean {
    if (other === this) return true;
    if (other.#specs.size !== this.#specs.size) return false;
    for (const [name, spec] of this.#specs) {
      const o = other.#specs.get(name);
      if (o === undefined || o.handler !== spec.handler || o.parameters !== spec.parameters) return false;
    }
    return true;
  }
}

/** An executor, as the loop sees it (a registry-derived one, or an environment that can also report completion). */
export interface Executor {
  execute(action: Action, signal: AbortSignal, ctx?: Omit<ToolContext, "signal">): Promise<ActionOutcome>;
}

/** Only the caller's abort propagates; a handler's own AbortError is an ordinary failure. */
function isAbort(_error: unknown, signal: AbortSignal): boolean {
  return signal.aborted;
}

/** Runs tool calls through their handlers and fills the outcome exactly per the seed's table. */
export class RegistryExecutor implements Executor {
  constructor(readonly registry: ToolRegistry) {}

  async execute(action: Action, signal: AbortSignal, ctx: Omit<ToolContext, "signal"> = {}): Promise<ActionOutcome> {
    if (action.kind !== "tool-call")
      return outcome(
        CALL.notExecuted,
        "The action was code, but this executor runs tool calls only; the run pairs a code interpreter with a tool-call executor.",
        true,
      );
    const checked = this.registry.validate(action.call);
    if (!checked.ok) return refusedOutcome(action.call.name, checked.message);
    const handler = checked.spec.handler as ToolHandler;
    signal.throwIfAborted();
    try {
      const result = await handler(checked.args, { ...ctx, signal });
      if (typeof result !== "string")
        return outcome(
          CALL.executed,
          `TypeError: the handler of ${checked.spec.name} returned ${result === null ? "null" : typeof result}, not a string`,
          false,
          "TypeError",
        );
      return outcome(CALL.executed, result, false);
    } catch (error) {
      if (isAbort(error, signal)) throw error;
      if (error instanceof ToolEnvironmentError) return outcome(CALL.envError, error.message, false);
      const name = error instanceof Error ? error.constructor.name || error.name : "Error";
      const message = error instanceof Error ? error.message : String(error);
      return outcome(CALL.executed, `${name}: ${message}`, false, name);
    }
  }
}
