export { type CreateModelOptions, createModel } from "./create.ts";
export { OpenAICompatibleModel, type OpenAIConfig, openAIConfigFromEnv, toWireRequest } from "./openai.ts";
export {
  estimateTokens,
  loadScript,
  type ModelScript,
  parseScript,
  ScriptError,
  type ScriptedCall,
  type ScriptedFailure,
  ScriptedModel,
  type ScriptedTurn,
} from "./scripted.ts";
export { readSse } from "./sse.ts";
