/**
 * The patch stream's frames and their Server-Sent Events framing (EN-23 … EN-25), exactly the
 * article's: an optional `: label` comment, `event: patch@1`, `id:`, `by:`, and one `data:` line.
 *
 * Reading: a block without `data:` (a keep-alive such as `: keep-alive`) is skipped; the label is
 * the comment line directly above `event:` (where `encodeSse` writes it) and other comment lines
 * are ignored. A keep-alive line sent without its own blank line right before an unlabeled frame
 * cannot be told from a label: servers send keep-alives as blocks of their own.
 */
import { decodePatch, type NodeId, type Op } from "@strata/dom";
import type { EventId } from "@strata/store";
import { EngineError } from "./errors.ts";
import { markChecked } from "./events.ts";

export type Frame =
  /** The state at `event`: the first frame of a subscription. `tree` is a canonical snapshot. */
  | { readonly type: "snapshot"; readonly event: EventId; readonly branch: string; readonly tree: string }
  /** A durable patch event. */
  | { readonly type: "event"; readonly id: EventId; readonly label: string | null; readonly by: string | null; readonly ops: readonly Op[] }
  /** The head moved to another line (rewind, branch switch): start over from this state. */
  | { readonly type: "reset"; readonly event: EventId; readonly branch: string; readonly tree: string }
  /** Streamed text not yet durable (it will arrive in a later `append` op of an event). */
  | { readonly type: "chunk"; readonly id: NodeId; readonly text: string }
  /** The subscriber fell behind and frames were dropped; the events follow from its cursor. */
  | { readonly type: "lagged"; readonly missed: number };

/** One frame in SSE framing (ends with a blank line). Multi-line data is split across `data:` lines. */
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
      return `event: ${frame.type}@1\nid: ${frame.event}\ndata: ${JSON.stringify({ branch: frame.branch, tree: JSON.parse(frame.tree) })}\n\n`;
    case "chunk":
      return `event: chunk@1\ndata: ${JSON.stringify({ id: frame.id, text: frame.text })}\n\n`;
    case "lagged":
      return `event: lagged@1\ndata: ${JSON.stringify({ missed: frame.missed })}\n\n`;
  }
}

/** A label or `by` goes on one line; commits reject line breaks in them, so a frame with one was not made by strata. */
function oneLine(s: string, field: string): string {
  if (/[\r\n]/.test(s))
    throw new EngineError("bad-input", `a frame's ${field} cannot hold a line break in SSE framing: ${JSON.stringify(s)}`);
  return s;
}

/**
 * Reads frames from SSE text (any number of complete frames; a trailing incomplete one is
 * ignored and reported by `rest`). Throws `EngineError` on a frame it cannot read.
 */
export function decodeSse(text: string): Frame[] {
  return decodeSseStream(text).frames;
}

/** Like {@link decodeSse}, also returning the unterminated tail to prepend to the next read. */
export function decodeSseStream(text: string): { frames: Frame[]; rest: string } {
  const frames: Frame[] = [];
  const blocks = text.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    if (block.trim() === "") continue;
    let comment: string | null = null;
    let label: string | null = null;
    let event = "message";
    let id: string | null = null;
    let by: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        comment = line.slice(1).replace(/^ /, "");
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      // The label is the comment right above `event:`; any other comment line is ignored.
      if (field === "event") label = comment;
      comment = null;
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "by") by = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0) continue; // a keep-alive or other block without data
    frames.push(frameOf(event, id, label, by, data.join("\n")));
  }
  return { frames, rest };
}

function frameOf(event: string, id: string | null, label: string | null, by: string | null, data: string): Frame {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(data) as Record<string, unknown>;
  } catch {
    throw new EngineError("bad-event", `SSE frame "${event}" (id ${id ?? "none"}) has data that is not JSON`);
  }
  const eventId = (): EventId => {
    const n = Number(id);
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new EngineError("bad-event", `SSE frame "${event}" needs a numeric id, got ${JSON.stringify(id)}`);
    return n as EventId;
  };
  switch (event) {
    case "patch@1":
      return { type: "event", id: eventId(), label, by, ops: markChecked(decodePatch(payload.ops)) };
    case "snapshot@1":
    case "reset@1":
      return {
        type: event === "reset@1" ? "reset" : "snapshot",
        event: eventId(),
        branch: String(payload.branch),
        tree: JSON.stringify(payload.tree),
      };
    case "chunk@1":
      return { type: "chunk", id: payload.id as NodeId, text: String(payload.text) };
    case "lagged@1":
      return { type: "lagged", missed: Number(payload.missed) };
    default:
      throw new EngineError("unknown-kind", `SSE frame kind "${event}" is not one strata writes`);
  }
}
