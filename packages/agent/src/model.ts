/**
 * The model boundary: what the agent loop sends a model (the request, PR-7) and what it gets back
 * (the events, AG-1 and AG-15). A model never throws into the loop except `ModelError`, which the
 * loop records as an outcome (AG-5).
 *
 * This module imports nothing: model clients (`@strata/models`) depend on it alone, through the
 * `@strata/agent/model` entry, and never on the session core or the loop.
 */

/** One message of the history the model sees (provider-neutral; clients map it to their wire format). */
export type ChatMessage =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls?: readonly ToolCallRequest[] }
  | { readonly role: "tool"; readonly toolCallId: string; readonly content: string };

export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model wrote them (JSON text). */
  readonly arguments: string;
}

export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ModelSettings {
  readonly provider: string;
  readonly model: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
}

/** Exactly what the engine sends a model (and what `renderPrompt` reproduces at any event). */
export interface ModelRequest {
  readonly system: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSchema[];
  readonly settings: ModelSettings;
}

/** What a model streams back. Tool calls are numbered by their position in the model's output. */
export type ModelEvent =
  | { readonly type: "text"; readonly delta: string }
  /** The model's reasoning (`reasoning_content`, thinking parts): recorded, never sent back (AG-15). */
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "tool-call"; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: "tool-arguments"; readonly index: number; readonly delta: string }
  | { readonly type: "usage"; readonly inputTokens: number; readonly outputTokens: number }
  | { readonly type: "done"; readonly finishReason: string };

export interface Model {
  /** `provider:model`, recorded in the tree. */
  readonly id: string;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

export type ModelErrorKind = "network" | "rate-limit" | "server" | "auth" | "bad-request" | "protocol" | "context-overflow" | "cancelled";

/** A model failure the loop records as an outcome (never an uncaught exception). */
export class ModelError extends Error {
  override readonly name = "ModelError";
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly options: {
      readonly status?: number;
      readonly retryable?: boolean;
      readonly retryAfterMs?: number;
      readonly cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
  }
  get retryable(): boolean {
    return this.options.retryable ?? (this.kind === "network" || this.kind === "rate-limit" || this.kind === "server");
  }
}
