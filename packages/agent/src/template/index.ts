/** The template language: a safe, deterministic, Jinja-like projection of the session tree. */
export { type Pos, TemplateError, type TemplateErrorCode, type TemplateLimit } from "./errors.ts";
export { checkTemplate, DEFAULT_LIMITS, type Limits, type RenderOptions, renderTemplate } from "./render.ts";
