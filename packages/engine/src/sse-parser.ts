/**
 * The Server-Sent Events line grammar (EN-25), as the WHATWG HTML standard defines it: a stream is
 * UTF-8 text whose lines end in CRLF, LF or CR; one leading BOM is dropped; a line starting with
 * `:` is a comment; other lines are `field: value` (one space after the colon is dropped; a line
 * without a colon is a field with an empty value); a blank line dispatches the block. A block
 * with no `data` line dispatches nothing; `data` lines are joined with LF; an `id` holding NUL is
 * ignored; `retry` takes only ASCII digits; unknown fields are ignored. What the stream ends
 * inside of (a block without its blank line) is dropped.
 *
 * Two additions strata reads on top (they are comments and an unknown field to any other
 * reader): the comment line directly above `event:` is the block's `label`, and `by:` its cause.
 *
 * Feeding is linear in the input however it is cut: a long line arriving in many small chunks is
 * kept as fragments and joined once, and the search for the next CR and LF never rescans text.
 */
import { EngineError } from "./errors.ts";

/** One dispatched block. `event` is undefined when the block named none (SSE's "message"). */
export interface SseMessage {
  readonly event: string | undefined;
  readonly data: string;
  /** The block's own `id:` line, if it had one. */
  readonly id: string | undefined;
  readonly label: string | null;
  readonly by: string | null;
}

/** Characters one unfinished line plus one block's data may hold before the stream is refused. */
export const DEFAULT_MAX_FRAME_CHARS = 256 * 1024 * 1024;

export class SseParser {
  readonly #max: number;
  #started = false;
  /** The previous chunk ended in CR: an LF starting this one belongs to it (CRLF cut in two). */
  #afterCr = false;
  readonly #fragments: string[] = [];
  #fragmentChars = 0;
  #event: string | undefined;
  #data: string[] = [];
  #dataChars = 0;
  #id: string | undefined;
  #by: string | null = null;
  #label: string | null = null;
  /** The comment line just read, while no other line has followed it. */
  #comment: string | null = null;
  /** True while the current block has any line (so a blank line ends something). */
  #inBlock = false;
  /** Where, in the text of the last `feed`, the unfinished block starts (-1: in an earlier chunk). */
  #blockStart = 0;
  #retry: number | undefined;
  #lastEventId = "";
  /** Text after a block whose handler threw: read first by the next `feed`. */
  #unread = "";

  constructor(maxFrameChars = DEFAULT_MAX_FRAME_CHARS) {
    this.#max = maxFrameChars;
  }

  /** The reconnection time the stream last asked for (`retry:`), in ms. */
  get retry(): number | undefined {
    return this.#retry;
  }

  /** The `id:` of the last block dispatched that had one (what a reconnect sends as `Last-Event-ID`). */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** Where the unfinished block starts in the text given to the last {@link feed}; -1 when it started in an earlier chunk. */
  get blockStart(): number {
    return this.#blockStart;
  }

  /**
   * Reads `text` (cut anywhere) and calls `onMessage` for every block it completes, in order. If
   * `onMessage` throws, the error propagates and the text after that block is kept: the next
   * `feed` (even of "") goes on from there.
   */
  feed(text: string, onMessage: (m: SseMessage) => void): void {
    if (this.#unread !== "") {
      text = this.#unread + text;
      this.#unread = "";
    }
    let pos = 0;
    if (!this.#started && text.length > 0) {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) pos = 1; // the stream's BOM (only its very first character)
    }
    if (this.#afterCr && text.length > 0) {
      this.#afterCr = false;
      if (text.charCodeAt(0) === 10) pos = 1;
    }
    this.#blockStart = this.#inBlock || this.#fragments.length > 0 ? -1 : pos;
    let cr = text.indexOf("\r", pos);
    let lf = text.indexOf("\n", pos);
    while (pos < text.length) {
      if (cr !== -1 && cr < pos) cr = text.indexOf("\r", pos);
      if (lf !== -1 && lf < pos) lf = text.indexOf("\n", pos);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) {
        this.#hold(text.slice(pos));
        return;
      }
      let line = text.slice(pos, end);
      if (this.#fragments.length > 0) {
        this.#fragments.push(line);
        line = this.#fragments.join("");
        this.#fragments.length = 0;
        this.#fragmentChars = 0;
      }
      let next = end + 1;
      if (end === cr) {
        if (next === text.length) this.#afterCr = true;
        else if (text.charCodeAt(next) === 10) next++;
      }
      pos = next;
      if (line === "") {
        this.#blockStart = pos;
        if (this.#inBlock)
          try {
            this.#dispatch(onMessage);
          } catch (e) {
            this.#unread = text.slice(pos);
            throw e;
          }
      } else this.#line(line);
    }
  }

  /** The stream ended (or was cut): drop the unfinished block; the next text starts a new stream. */
  end(): void {
    this.#unread = "";
    this.#fragments.length = 0;
    this.#fragmentChars = 0;
    this.#resetBlock();
    this.#started = false;
    this.#afterCr = false;
  }

  #hold(part: string): void {
    if (part === "") return;
    this.#fragments.push(part);
    this.#fragmentChars += part.length;
    this.#check();
  }

  #check(): void {
    if (this.#fragmentChars + this.#dataChars > this.#max) {
      const chars = this.#fragmentChars + this.#dataChars;
      this.end();
      throw new EngineError(
        "bad-event",
        `an SSE frame is longer than ${this.#max} characters (${chars} so far); the stream was dropped (raise maxFrameChars to read larger frames)`,
      );
    }
  }

  #line(line: string): void {
    this.#inBlock = true;
    if (line.charCodeAt(0) === 58) {
      this.#comment = line.charCodeAt(1) === 32 ? line.slice(2) : line.slice(1);
      return;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + (line.charCodeAt(colon + 1) === 32 ? 2 : 1));
    switch (field) {
      case "event":
        // The label is the comment right above `event:`; any other comment line is ignored.
        this.#label = this.#comment;
        this.#event = value === "" ? undefined : value;
        break;
      case "data":
        this.#data.push(value);
        this.#dataChars += value.length + 1;
        this.#check();
        break;
      case "id":
        if (!value.includes("\0")) this.#id = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.#retry = Number.parseInt(value, 10);
        break;
      case "by":
        this.#by = value;
        break;
      default:
        break; // unknown fields are ignored (SSE)
    }
    this.#comment = null;
  }

  #dispatch(onMessage: (m: SseMessage) => void): void {
    const id = this.#id;
    if (id !== undefined) this.#lastEventId = id;
    const message: SseMessage | undefined =
      this.#data.length === 0 ? undefined : { event: this.#event, data: this.#data.join("\n"), id, label: this.#label, by: this.#by };
    this.#resetBlock();
    if (message !== undefined) onMessage(message);
  }

  #resetBlock(): void {
    this.#event = undefined;
    this.#data = [];
    this.#dataChars = 0;
    this.#id = undefined;
    this.#by = null;
    this.#label = null;
    this.#comment = null;
    this.#inBlock = false;
  }
}
