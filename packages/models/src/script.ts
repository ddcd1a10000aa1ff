/**
 * Model scripts: their shape, their limits and the validating readers (MO-6, MO-22). A script is
 * data from a file, so everything about it is checked before a model plays it: the file's size, each
 * field's type and each reply's size, with errors naming the file, the turn and the limit.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { ModelErrorKind } from "@strata/agent/model";

/** One scripted tool call; `arguments` is written as the model would (an object is JSON-encoded). */
export interface ScriptedCall {
  readonly name: string;
  readonly arguments: unknown;
  /** Optional call id (default `call_<turn>_<index>`). */
  readonly id?: string;
}

/** A failure the script injects: before any output, or after `afterChunks` chunks. */
export interface ScriptedFailure {
  readonly kind: ModelErrorKind;
  readonly message: string;
  /** How many times this turn fails before it succeeds (default: always). */
  readonly times?: number;
  readonly afterChunks?: number;
}

export interface ScriptedTurn {
  /** Reasoning streamed before the text (as `reasoning` events). */
  readonly reasoning?: string;
  readonly text?: string;
  readonly toolCalls?: readonly ScriptedCall[];
  readonly finishReason?: string;
  readonly fail?: ScriptedFailure;
  /** Only play this turn when the last message of the request contains this string (a guard that
   * makes a script fail loudly when the conversation is not the one it was written for). */
  readonly expect?: string;
}

export interface ModelScript {
  /** Recorded as the model id: `scripted:<name>`. */
  readonly name: string;
  /** Characters per streamed chunk (default 16). */
  readonly chunk?: number;
  /** Pause between chunks, in milliseconds (default 0, at most 60 000). */
  readonly delayMs?: number;
  readonly turns: readonly ScriptedTurn[];
}

/** Size limits of a script, in UTF-8 bytes (MO-22). */
export interface ScriptLimits {
  /** The script file (default 16 MiB). */
  readonly maxFileBytes: number;
  /** One turn's text, and separately its reasoning (default 1 MiB). */
  readonly maxTextBytes: number;
  /** One tool call's arguments as sent, JSON-encoded (default 1 MiB). */
  readonly maxArgumentsBytes: number;
}

export const DEFAULT_SCRIPT_LIMITS: ScriptLimits = {
  maxFileBytes: 16 * 1024 * 1024,
  maxTextBytes: 1024 * 1024,
  maxArgumentsBytes: 1024 * 1024,
};

/** The longest pause between chunks a script may ask for (a timer cannot wait longer than 2³¹ ms anyway). */
export const MAX_DELAY_MS = 60_000;

export type ScriptErrorCode = "not-found" | "unreadable" | "too-large" | "invalid";

/** Thrown for a script that cannot be used, naming the file and the field. */
export class ScriptError extends Error {
  override readonly name = "ScriptError";
  constructor(
    readonly code: ScriptErrorCode,
    message: string,
    /** The file, when the script came from one. */
    readonly path?: string,
  ) {
    super(message);
  }
}

const KINDS: readonly ModelErrorKind[] = [
  "network",
  "rate-limit",
  "server",
  "auth",
  "bad-request",
  "protocol",
  "context-overflow",
  "cancelled",
];

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
const n = (x: number): string => x.toLocaleString("en-US");
const isCount = (x: unknown): boolean => Number.isInteger(x) && (x as number) >= 0;

/** The arguments a call sends, as the model would write them. */
export function callArguments(call: ScriptedCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
}

/** Checks a parsed script's shape and sizes; `where` names the source in messages. */
export function parseScript(value: unknown, where = "script", limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS): ModelScript {
  const fail = (at: string, what: string, code: ScriptErrorCode = "invalid"): never => {
    throw new ScriptError(code, `${at}: ${what}`);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value))
    fail(where, "a model script must be a JSON object with `name` and `turns`");
  const v = value as Record<string, unknown>;
  if (typeof v.name !== "string" || v.name === "") fail(where, "`name` must be a non-empty string");
  if (v.chunk !== undefined && (!Number.isInteger(v.chunk) || (v.chunk as number) < 1)) fail(where, "`chunk` must be a positive integer");
  if (v.delayMs !== undefined && (typeof v.delayMs !== "number" || !(v.delayMs >= 0 && v.delayMs <= MAX_DELAY_MS)))
    fail(where, `\`delayMs\` must be a number from 0 to ${n(MAX_DELAY_MS)}`);
  if (!Array.isArray(v.turns) || v.turns.length === 0) fail(where, "`turns` must be a non-empty array");
  (v.turns as unknown[]).forEach((t, i) => {
    const at = `${where}: turns[${i}] (turn ${i + 1})`;
    if (typeof t !== "object" || t === null || Array.isArray(t)) fail(at, "must be an object");
    const turn = t as Record<string, unknown>;
    for (const field of ["text", "reasoning", "expect", "finishReason"] as const)
      if (turn[field] !== undefined && typeof turn[field] !== "string") fail(at, `\`${field}\` must be a string`);
    for (const field of ["text", "reasoning"] as const) {
      const size = typeof turn[field] === "string" ? bytes(turn[field] as string) : 0;
      if (size > limits.maxTextBytes)
        fail(at, `\`${field}\` is ${n(size)} bytes, over the ${n(limits.maxTextBytes)}-byte limit for one reply; shorten it`, "too-large");
    }
    if (turn.toolCalls !== undefined) {
      if (!Array.isArray(turn.toolCalls)) fail(at, "`toolCalls` must be an array");
      (turn.toolCalls as unknown[]).forEach((c, j) => {
        if (typeof c !== "object" || c === null || typeof (c as { name?: unknown }).name !== "string")
          fail(at, `toolCalls[${j}] needs a string \`name\``);
        const call = c as ScriptedCall;
        if (call.id !== undefined && (typeof call.id !== "string" || call.id === ""))
          fail(at, `toolCalls[${j}].id must be a non-empty string`);
        let args = "";
        try {
          args = callArguments(call);
        } catch (cause) {
          // nested deeper than the JSON encoder's stack, a BigInt, a cycle (from code)
          fail(at, `toolCalls[${j}].arguments cannot be written as JSON: ${(cause as Error).message}`);
        }
        const size = bytes(args);
        if (size > limits.maxArgumentsBytes)
          fail(
            at,
            `toolCalls[${j}].arguments are ${n(size)} bytes, over the ${n(limits.maxArgumentsBytes)}-byte limit for one call; shorten them`,
            "too-large",
          );
      });
    }
    if (turn.fail !== undefined) {
      if (typeof turn.fail !== "object" || turn.fail === null || Array.isArray(turn.fail)) fail(at, "`fail` must be an object");
      const f = turn.fail as Record<string, unknown>;
      if (!KINDS.includes(f.kind as ModelErrorKind)) fail(at, `\`fail.kind\` must be one of ${KINDS.join(", ")}`);
      if (typeof f.message !== "string") fail(at, "`fail.message` must be a string");
      if (f.times !== undefined && !isCount(f.times)) fail(at, "`fail.times` must be a whole number ≥ 0");
      if (f.afterChunks !== undefined && !isCount(f.afterChunks)) fail(at, "`fail.afterChunks` must be a whole number ≥ 0");
    }
    if (turn.text === undefined && turn.toolCalls === undefined && turn.fail === undefined)
      fail(at, "a turn needs `text`, `toolCalls` or `fail`");
  });
  return value as ModelScript;
}

/** Reads and checks a script file (a leading BOM is allowed); throws `ScriptError` with the path. */
export function loadScript(path: string, limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS): ModelScript {
  const text = readBounded(path, limits.maxFileBytes);
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (cause) {
    throw new ScriptError("invalid", `${path} is not valid JSON: ${(cause as Error).message}`, path);
  }
  try {
    return parseScript(value, path, limits);
  } catch (error) {
    if (error instanceof ScriptError) throw new ScriptError(error.code, error.message, path);
    throw error;
  }
}

/** A regular file's text, refusing one over `max` bytes (also one that grows while being read). */
function readBounded(path: string, max: number): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new ScriptError(
        "not-found",
        `the model script ${path} does not exist; pass an existing file (e.g. scripted:fixtures/models/demo.json)`,
        path,
      );
    throw new ScriptError("unreadable", `cannot read the model script ${path}: ${(cause as Error).message}`, path);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ScriptError("unreadable", `the model script ${path} is not a regular file`, path);
    if (stat.size > max)
      throw new ScriptError(
        "too-large",
        `the model script ${path} is ${n(stat.size)} bytes, over the ${n(max)}-byte limit for a script`,
        path,
      );
    // read to the end rather than trusting the size: the file may grow while it is read
    const parts: Buffer[] = [];
    let length = 0;
    for (;;) {
      const part = Buffer.allocUnsafe(Math.min(1024 * 1024, max + 1 - length));
      const read = readSync(fd, part, 0, part.length, null);
      if (read === 0) break;
      parts.push(part.subarray(0, read));
      length += read;
      if (length > max) throw new ScriptError("too-large", `the model script ${path} is over the ${n(max)}-byte limit for a script`, path);
    }
    return Buffer.concat(parts, length).toString("utf8");
  } catch (error) {
    if (error instanceof ScriptError) throw error;
    throw new ScriptError("unreadable", `cannot read the model script ${path}: ${(error as Error).message}`, path);
  } finally {
    closeSync(fd);
  }
}
