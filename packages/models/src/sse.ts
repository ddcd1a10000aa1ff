import { ModelError } from "@strata/agent/model";

/** One dispatched server-sent event. */
export interface SseEvent {
  /** The `event:` field, `"message"` when the server named none. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  /** False for an event the stream ended inside (no blank line after it): possibly cut short. */
  readonly terminated: boolean;
}

/** Default bound on one line and on one event's data, in UTF-16 code units. */
export const DEFAULT_MAX_SSE_EVENT = 8 * 1024 * 1024;

/**
 * A streaming, bounded reader of Server-Sent Events as the WHATWG HTML standard defines them
 * (MO-15): a leading BOM is dropped, lines end in CRLF, LF or a lone CR (also when a network chunk
 * splits the CRLF pair or a UTF-8 character), `:` lines are comments, a field without a colon has an
 * empty value, one space after the colon is dropped, `data:` lines accumulate until a blank line
 * dispatches the event, `event:` names it. An event the body ends inside is still yielded, marked
 * `terminated: false`, because some servers omit the last blank line; the caller decides whether it
 * is whole. A line or an event's data longer than `maxEvent` is a `protocol` error.
 *
 * Linear in the input: each chunk is scanned once and only the unfinished tail is kept.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxEvent = DEFAULT_MAX_SSE_EVENT): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder("utf-8");
  let pending = ""; // the unfinished line
  let first = true;
  let data: string[] = [];
  let dataSize = 0;
  let event = "";
  let skipLf = false; // the previous chunk ended in CR: a LF starting this one belongs to it
  const tooLong = (): never => {
    throw new ModelError("protocol", `the server sent an event longer than ${maxEvent} characters`, { retryable: false });
  };
  const line = (text: string): SseEvent | undefined => {
    if (text === "") {
      const out = data.length > 0 ? { event: event === "" ? "message" : event, data: data.join("\n"), terminated: true } : undefined;
      data = [];
      dataSize = 0;
      event = "";
      return out;
    }
    if (text.charCodeAt(0) === 0x3a) return undefined; // ":" starts a comment (keep-alives)
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (field === "data") {
      dataSize += value.length + 1;
      if (dataSize > maxEvent) tooLong();
      data.push(value);
    } else if (field === "event") event = value;
    // `id` and `retry` matter only to reconnecting EventSource clients; other fields are ignored
    return undefined;
  };
  const scan = function* (text: string): Generator<SseEvent> {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      if (c === 0x0a && skipLf && i === start && pending === "") {
        skipLf = false;
        start = i + 1;
        continue;
      }
      skipLf = false;
      const whole = pending + text.slice(start, i);
      pending = "";
      if (c === 0x0d) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 0x0a) i++;
        } else skipLf = true;
      }
      start = i + 1;
      const out = line(whole);
      if (out !== undefined) yield out;
    }
    if (start < text.length) {
      skipLf = false;
      pending += text.slice(start);
      if (pending.length > maxEvent) tooLong();
    }
  };
  for await (const chunk of body) {
    let text = decoder.decode(chunk, { stream: true });
    if (first && text !== "") {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    yield* scan(text);
  }
  yield* scan(decoder.decode());
  if (pending !== "") {
    line(pending);
    pending = "";
  }
  if (data.length > 0) yield { event: event === "" ? "message" : event, data: data.join("\n"), terminated: false };
}
