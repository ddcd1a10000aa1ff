/**
 * The chat-completions request body (MO-7), and the two adjustments a server's rejection can ask for
 * (MO-18): reasoning models refuse the legacy `max_tokens` and want `max_completion_tokens`; some
 * servers refuse `stream_options`. Reasoning the model streamed is recorded but never sent back.
 */
import type { ChatMessage, ModelRequest } from "@strata/agent/model";
import type { ErrorInfo } from "./errors.ts";

export interface WireOptions {
  /** The field the output-token limit goes in (default `max_tokens`). */
  readonly maxTokensField?: "max_tokens" | "max_completion_tokens";
  /** Send `stream_options: {include_usage: true}` (default true). */
  readonly streamOptions?: boolean;
}

/** The wire form of the request body (exported for tests and for `strata prompt --json`). */
export function toWireRequest(request: ModelRequest, model: string, options: WireOptions = {}): Record<string, unknown> {
  const messages: unknown[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  for (const m of request.messages) messages.push(wireMessage(m));
  const body: Record<string, unknown> = { model, messages, stream: true };
  if (options.streamOptions !== false) body.stream_options = { include_usage: true };
  if (request.tools.length > 0)
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  if (request.settings.temperature !== undefined) body.temperature = request.settings.temperature;
  if (request.settings.maxTokens !== undefined) body[options.maxTokensField ?? "max_tokens"] = request.settings.maxTokens;
  return body;
}

function wireMessage(m: ChatMessage): unknown {
  switch (m.role) {
    case "user":
      return { role: "user", content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    case "assistant": {
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: m.content };
      return {
        role: "assistant",
        content: m.content === "" ? null : m.content,
        tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
      };
    }
    default:
      return m satisfies never;
  }
}

/**
 * The options that answer a 400 rejecting one of our parameters, or undefined when the rejection
 * is about something else (or was already answered): the request is then re-sent once, before any
 * output, and the model remembers the options for its later requests.
 */
export function adjustForRejection(info: ErrorInfo, request: ModelRequest, options: WireOptions): WireOptions | undefined {
  const about = (field: string): boolean =>
    info.param === field ||
    (new RegExp(`\\b${field}\\b`).test(info.message) &&
      /unsupported|unrecognized|unknown|not (supported|permitted|allowed)|extra/i.test(info.message));
  if (request.settings.maxTokens !== undefined && (options.maxTokensField ?? "max_tokens") === "max_tokens" && about("max_tokens"))
    return { ...options, maxTokensField: "max_completion_tokens" };
  if (options.streamOptions !== false && about("stream_options")) return { ...options, streamOptions: false };
  return undefined;
}
