export { type CreateModelOptions, checkModelSpec, type ResolvedModelSpec, resolveModelSpec } from "./check.ts";
export {
  chatCompletionsUrl,
  checkOpenAIConfig,
  DEFAULT_BASE_URL,
  isLocalHost,
  type OpenAIConfig,
  openAIConfigFromEnv,
} from "./config.ts";
export { createModel } from "./create.ts";
export { describeCause, type ErrorInfo, errorInfo } from "./errors.ts";
export { OpenAICompatibleModel } from "./openai.ts";
export { ReplyDecoder } from "./reply.ts";
export { parseHttpDate, parseRetryAfter } from "./retry-after.ts";
export {
  DEFAULT_SCRIPT_LIMITS,
  loadScript,
  MAX_DELAY_MS,
  type ModelScript,
  parseScript,
  ScriptError,
  type ScriptErrorCode,
  type ScriptedCall,
  type ScriptedFailure,
  type ScriptedTurn,
  type ScriptLimits,
} from "./script.ts";
export { estimateTokens, ScriptedModel } from "./scripted.ts";
export { ModelSpecError, type ModelSpecProblem, type ModelSpecProblemCode } from "./spec-error.ts";
export { DEFAULT_MAX_SSE_EVENT, readSse, type SseEvent } from "./sse.ts";
export { toWireRequest, type WireOptions } from "./wire.ts";
