/**
 * The patch stream's frames and their Server-Sent Events framing (EN-24 … EN-26, decision 0015),
 * exactly the article's: an optional `: label` comment, `event: patch@1`, `id:`, `by:`, and one
 * `data:` line. The other frames are `snapshot@1` and `reset@1` (a canonical snapshot a
 * `Replica` loads), `chunk@1`, `lagged@1`, and the two a stream ends with, `gone@1` and `error@1`.
 *
 * Reading follows the SSE standard (see `sse-parser.ts`): CRLF, LF or CR line ends, a leading BOM,
 * comments, multi-line data and `retry:`; a block without `data:` (a keep-alive such as
 * `: keep-alive`) is skipped; the label is the comment line directly above `event:` (where
 * `encodeSse` writes it) and other comment lines are ignored. A keep-alive line sent without its
 * own blank line right before an unlabeled frame cannot be told from a label: servers send
 * keep-alives as blocks of their own.
 */
import { DomError, decodePatch, isNodeId, type NodeId, type Op } from "@strata/dom";
import type { EventId } from "@strata/store";
import { EngineError } from "./errors.ts";
import { markChecked } from "./events.ts";
import { DEFAULT_MAX_FRAME_CHARS, SseParser } from "./sse-parser.ts";

/** Why a stream stopped with an `error` frame. */
export type StreamErrorCode =
  /** An event on the line does not decode or does not apply (a damaged log: run `strata verify`). */
  | "bad-event"
  /** The state to send could not be materialized (a damaged snapshot or page). */
  | "bad-snapshot"
  /** The state to send is too large for one frame. */
  | "too-large"
  /** Anything else the sender did not expect; the message says what. */
  | "internal";

const STREAM_ERROR_CODES: ReadonlySet<string> = new Set<StreamErrorCode>(["bad-event", "bad-snapshot", "too-large", "internal"]);

export type Frame =
  /** The state at `event`: the first frame of a subscription. `tree` is a canonical snapshot (`toSnapshot`). */
  | { readonly type: "snapshot"; readonly event: EventId; readonly branch: string; readonly tree: string }
  /** A durable patch event. */
  | { readonly type: "event"; readonly id: EventId; readonly label: string | null; readonly by: string | null; readonly ops: readonly Op[] }
  /** The head moved to another line (rewind, branch switch): start over from this state (a canonical snapshot). */
  | { readonly type: "reset"; readonly event: EventId; readonly branch: string; readonly tree: string }
  /** Streamed text not yet durable (it will arrive in a later `append` op of an event). */
  | { readonly type: "chunk"; readonly id: NodeId; readonly text: string }
  /** The subscriber fell behind and frames were dropped; the events follow from its cursor. */
  | { readonly type: "lagged"; readonly missed: number }
  /** The followed branch (or its session) no longer exists; the stream ends after this frame. */
  | { readonly type: "gone"; readonly session: string | null; readonly branch: string; readonly message: string }
  /** The sender cannot go on (at `event`, when one is to blame); the stream ends after this frame. */
  | { readonly type: "error"; readonly code: StreamErrorCode; readonly message: string; readonly event: EventId | null };

/**
 * One frame in SSE framing (ends with a blank line). A snapshot's `tree` is written as it is
 * (it must be the JSON text of a snapshot); data with line breaks is split across `data:` lines.
 */
export function encodeSse(frame: Frame): string {
  switch (frame.type) {
    case "event": {
      let out = frame.label !== null ? `: ${oneLine(frame.label, "label")}\n` : "";
      out += `event: patch@1\nid: ${frame.id}\n`;
      if (frame.by !== null) out += `by: ${oneLine(frame.by, "by")}\n`;
      return `${out}data: ${JSON.stringify({ ops: frame.ops })}\n\n`;
    }
    case "snapshot":
    case "reset":
      // Spliced, not re-serialized: a snapshot can be large, and its bytes are already canonical.
      return `event: ${frame.type}@1\nid: ${frame.event}\n${dataLines(`{"branch":${JSON.stringify(frame.branch)},"tree":${frame.tree}}`)}\n`;
    case "chunk":
      return `event: chunk@1\ndata: ${JSON.stringify({ id: frame.id, text: frame.text })}\n\n`;
    case "lagged":
      return `event: lagged@1\ndata: ${JSON.stringify({ missed: frame.missed })}\n\n`;
    case "gone":
      return `event: gone@1\ndata: ${JSON.stringify({ session: frame.session, branch: frame.branch, message: frame.message })}\n\n`;
    case "error":
      return `event: error@1\ndata: ${JSON.stringify({ code: frame.code, message: frame.message, event: frame.event })}\n\n`;
    default:
      return unknownFrame(frame);
  }
}

function unknownFrame(frame: never): never {
  throw new EngineError("bad-input", `not a frame: ${JSON.stringify(frame)}`);
}

/** `data:` lines for `text` (JSON has line breaks only as white space, so splitting keeps it intact). */
function dataLines(text: string): string {
  let out = "";
  for (const line of text.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return out;
}

/** A label or `by` goes on one line; commits reject line breaks in them, so a frame with one was not made by strata. */
function oneLine(s: string, field: string): string {
  if (/[\r\n]/.test(s))
    throw new EngineError("bad-input", `a frame's ${field} cannot hold a line break in SSE framing: ${JSON.stringify(s)}`);
  return s;
}

/**
 * Reads frames from SSE text (the start of a stream; any number of complete frames; a trailing
 * incomplete one is ignored). Throws `EngineError` on a frame it cannot read.
 */
export function decodeSse(text: string): Frame[] {
  return decodeSseStream(text).frames;
}

/**
 * Like {@link decodeSse}, also returning the unfinished block (raw, from its first character) to
 * prepend to the next read. A stream read in pieces is better read with {@link SseDecoder}.
 */
export function decodeSseStream(text: string): { frames: Frame[]; rest: string } {
  const frames: Frame[] = [];
  const parser = new SseParser(Number.POSITIVE_INFINITY);
  parser.feed(text, (m) => frames.push(decodeSseMessage(m)));
  const start = parser.blockStart;
  return { frames, rest: start < 0 ? text : text.slice(start) };
}

/**
 * Reads a stream of frames as it arrives (EN-25): text or UTF-8 bytes, cut anywhere — inside a
 * line, a CRLF pair or a multi-byte character. Frames are handed to `onFrame` in order.
 */
export class SseDecoder {
  readonly #parser: SseParser;
  readonly #onFrame: (frame: Frame) => void;
  #utf8: InstanceType<typeof TextDecoder> | undefined;

  /** `maxFrameChars` bounds one unfinished frame (default 256 Mi characters). */
  constructor(onFrame: (frame: Frame) => void, options: { maxFrameChars?: number } = {}) {
    this.#onFrame = onFrame;
    this.#parser = new SseParser(options.maxFrameChars ?? DEFAULT_MAX_FRAME_CHARS);
  }

  /**
   * Reads the next piece of the stream. Throws `EngineError` at a frame it cannot read, after
   * every frame before it was handed out; the text after it is kept (`push("")` goes on).
   */
  push(chunk: string | Uint8Array): void {
    let text: string;
    if (typeof chunk === "string") text = (this.#utf8?.decode() ?? "") + chunk;
    else {
      // The BOM is the parser's to drop (it may also arrive as text).
      this.#utf8 ??= new TextDecoder("utf-8", { ignoreBOM: true });
      text = this.#utf8.decode(chunk, { stream: true });
    }
    this.#parser.feed(text, (m) => this.#onFrame(decodeSseMessage(m)));
  }

  /** The connection ended: an unfinished frame is dropped (SSE), and the next push starts a new stream. */
  end(): void {
    this.#utf8 = undefined;
    this.#parser.end();
  }

  /** The `id` of the last frame that carried one: what a reconnect sends as `Last-Event-ID`. */
  get lastEventId(): string {
    return this.#parser.lastEventId;
  }

  /** The reconnection delay the stream asked for (`retry:`), in ms. */
  get retry(): number | undefined {
    return this.#parser.retry;
  }
}

/**
 * One frame from a dispatched SSE message, as any SSE client gives it (`event` is the type,
 * "message" or undefined when none was named; `id` the block's own id). Standard clients drop
 * comments and unknown fields, so their frames have `label` and `by` null. Throws `EngineError`
 * (`unknown-kind` for a frame strata does not write, `bad-event` for one it cannot read).
 */
export function decodeSseMessage(m: {
  readonly event?: string | undefined;
  readonly data: string;
  readonly id?: string | undefined;
  readonly label?: string | null;
  readonly by?: string | null;
}): Frame {
  const event = m.event ?? "message";
  const id = m.id === undefined || m.id === "" ? null : m.id;
  const bad = (what: string): never => {
    throw new EngineError("bad-event", `SSE frame "${event}" (id ${id ?? "none"}) ${what}`);
  };
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(m.data) as Record<string, unknown>;
  } catch {
    return bad("has data that is not JSON");
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return bad("has data that is not a JSON object");
  const eventId = (): EventId => {
    const n = id === null || !/^[0-9]+$/.test(id) ? Number.NaN : Number(id);
    if (!Number.isSafeInteger(n) || n <= 0) bad(`needs a numeric id, got ${JSON.stringify(id)}`);
    return n as EventId;
  };
  const str = (key: string): string => {
    const v = payload[key];
    return typeof v === "string" ? v : bad(`needs a string "${key}", got ${JSON.stringify(v)}`);
  };
  switch (event) {
    case "patch@1": {
      const frameId = eventId();
      let ops: Op[];
      try {
        ops = decodePatch(payload.ops);
      } catch (e) {
        if (e instanceof DomError) return bad(`has ops that do not decode: ${e.message}`);
        throw e;
      }
      return { type: "event", id: frameId, label: m.label ?? null, by: m.by ?? null, ops: markChecked(ops) };
    }
    case "snapshot@1":
    case "reset@1": {
      const at = eventId();
      const branch = str("branch");
      const tree = payload.tree;
      if (typeof tree !== "object" || tree === null || Array.isArray(tree)) return bad("needs a snapshot object as its tree");
      return { type: event === "reset@1" ? "reset" : "snapshot", event: at, branch, tree: JSON.stringify(tree) };
    }
    case "chunk@1": {
      const node = payload.id;
      if (!isNodeId(node)) return bad(`needs an element id, got ${JSON.stringify(node)}`);
      return { type: "chunk", id: node, text: str("text") };
    }
    case "lagged@1": {
      const missed = payload.missed;
      if (typeof missed !== "number" || !Number.isSafeInteger(missed) || missed < 0)
        return bad(`needs a count "missed", got ${JSON.stringify(missed)}`);
      return { type: "lagged", missed };
    }
    case "gone@1": {
      const session = payload.session;
      if (session !== null && typeof session !== "string") return bad(`needs a session id or null, got ${JSON.stringify(session)}`);
      return { type: "gone", session, branch: str("branch"), message: str("message") };
    }
    case "error@1": {
      const code = str("code");
      const at = payload.event;
      if (at !== null && (typeof at !== "number" || !Number.isSafeInteger(at) || at <= 0))
        return bad(`needs an event id or null, got ${JSON.stringify(at)}`);
      // A code from a newer writer is kept as "internal"; its message still says what happened.
      return {
        type: "error",
        code: STREAM_ERROR_CODES.has(code) ? (code as StreamErrorCode) : "internal",
        message: str("message"),
        event: at as EventId | null,
      };
    }
    default:
      throw new EngineError("unknown-kind", `SSE frame kind "${event}" is not one strata writes`);
  }
}
