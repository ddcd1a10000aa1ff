/**
 * What every reader produces and the writer consumes: a foreign session as a list of steps, each
 * one record of the source (a line of a JSONL file, a message file of OpenCode's storage) turned
 * into what it means for the tree — a user turn, an assistant reply or part of one, tool results,
 * a compaction, a model switch. Steps form a tree through `parent` (the source's own ids; a linear
 * format names the step before); the writer turns a step whose parent is not the head of a line it
 * is writing into a strata branch (IM-6). Nothing here knows SQLite or the strata tree.
 */

/** The formats strata imports. */
export const FORMATS = ["claude-code", "pi", "codex", "opencode"] as const;
export type Format = (typeof FORMATS)[number];

/** A problem found in a source, with where it is (1-based line; 0 when it concerns the whole file). */
export interface ImportProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** Closed codes of the import's own failures (IM-9, IM-10). */
export type ImportErrorCode = "unknown-version" | "not-a-session" | "unreadable" | "bad-input";

/** An expected failure of an import: what, where, and what to do. Never thrown for a malformed line (that is a problem). */
export class ImportError extends Error {
  override readonly name = "ImportError";
  constructor(
    readonly code: ImportErrorCode,
    message: string,
    readonly file?: string,
    /**
     * Every line of the file is a JSON record and none is a session's (a tool's other files: Claude
     * Code's and Codex's `history.jsonl`, a session file of summaries only): found in a directory, it
     * is listed as not a session rather than failed.
     */
    readonly notSession = false,
  ) {
    super(message);
  }
}

/** One tool call of an assistant step. */
export interface ForeignCall {
  /** The source's call id (`toolu_…`, `call_…`). */
  readonly id: string;
  readonly name: string;
  /** The arguments as JSON text (the source's own text when it recorded one). */
  readonly args: string;
  /** Where the call is in the source when it is a record of its own (an OpenCode tool part); else its step's. */
  readonly at?: { readonly ref: string; readonly line: number; readonly file?: string };
  /** Links the call's element records as attributes (an OpenCode task call's `child-session`). */
  readonly links?: Readonly<Record<string, string>>;
}

/** One tool result of a results step, settling the call with that id. */
export interface ForeignResult {
  readonly callId: string;
  readonly output: string;
  /** The source says the tool reported an error (`is_error`, `isError`, `status: "error"`). */
  readonly isError: boolean;
}

export interface ForeignUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  /** Reasoning tokens, when the source counts them apart (OpenCode). */
  readonly reasoning?: number;
  readonly cost?: number;
}

interface StepBase {
  /** The source's id of this record (unique in the source). */
  readonly key: string;
  /** The source id the elements name (`ref`), when it is not the key (one record written on two lines: OpenCode's revert). */
  readonly ref?: string;
  /** The key of the step this one follows; `null`: the first step of a line of its own (IM-6). */
  readonly parent: string | null;
  /** Milliseconds since the epoch, from the source (undefined: the source has none for it). */
  readonly ts: number | undefined;
  /** Where it is in the source: a 1-based line, or a file of a storage directory. */
  readonly line: number;
  /** The file the record is in, when the source is a directory (OpenCode). */
  readonly file?: string;
  /**
   * A branch name: this step starts a line of its own, named so — at its parent's event (or right
   * after the import record when it has none), even when its parent is the head of a line being
   * written (sidechains, OpenCode's reverted messages).
   */
  readonly lineName?: string;
}

export type Step =
  | (StepBase & { readonly kind: "user"; readonly text: string; readonly origin?: string })
  | (StepBase & {
      readonly kind: "assistant";
      /** Steps of one model response (Claude Code splits one over several lines) share a group: they fill one turn. */
      readonly group?: string;
      /** `provider:model`. */
      readonly model?: string;
      readonly text: string;
      readonly reasoning: string;
      readonly calls: readonly ForeignCall[];
      readonly usage?: ForeignUsage;
      /** The source's finish reason, when it is neither a plain stop nor a tool-call stop. */
      readonly finish?: string;
      /** The model failed: the turn is `failed` (it leaves the projection) with this message as its diag. */
      readonly error?: string;
    })
  | (StepBase & { readonly kind: "results"; readonly results: readonly ForeignResult[] })
  | (StepBase & {
      readonly kind: "compaction";
      readonly summary: string;
      /** The key of the first step the compaction keeps (Pi); undefined: it hides everything before it. */
      readonly firstKept?: string;
    })
  | (StepBase & { readonly kind: "model"; readonly provider: string; readonly model: string });

/** A source read: its steps and what the writer records about it in `<meta><import>`. */
export interface ForeignSession {
  readonly from: Format;
  /** The source's format version marker (Claude Code's `version`, Pi's header `version` …). */
  readonly version: string;
  /** The source's session id. */
  readonly sourceId: string;
  readonly title?: string;
  readonly cwd?: string;
  /** The system prompt as the source recorded it; undefined: the source did not record it (IM-8). */
  readonly system?: string;
  readonly steps: readonly Step[];
  /** Keys of records that map to no step but that later records name as their parent: → the key they follow. */
  readonly aliases: ReadonlyMap<string, string | null>;
  /** Record types kept only in the source blob (no place in the tree), with their counts (IM-4). */
  readonly unmapped: ReadonlyMap<string, number>;
  /** Malformed lines and records that could not be read (IM-5). */
  readonly problems: readonly ImportProblem[];
  /** Links to other sessions the source names (Codex forks, OpenCode child sessions). */
  readonly links?: Readonly<Record<string, string>>;
}

/** Milliseconds since the epoch of an ISO-8601 text or an epoch number; undefined when it is neither. */
export function timeOf(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v) && v >= 0) return Math.floor(v);
  if (typeof v !== "string") return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) && t >= 0 ? t : undefined;
}

/** Counts one more record of `type` kept only in the source. */
export function countUnmapped(m: Map<string, number>, type: string): void {
  m.set(type, (m.get(type) ?? 0) + 1);
}

/** What an assistant message's content blocks say: its text, its reasoning and its tool calls. */
export interface AssistantBlocks {
  readonly text: string[];
  readonly reasoning: string[];
  readonly calls: ForeignCall[];
}

/**
 * Reads the content blocks of an assistant message in the shape Claude Code and Pi share
 * (`text`, `thinking`, and a tool-call block whose type and argument field each format names);
 * any other block is counted as unmapped (kept in the source blob only).
 */
export function assistantBlocks(
  content: readonly unknown[],
  call: { readonly type: string; readonly args: string },
  line: number,
  unmapped: Map<string, number>,
  bad: (line: number, message: string) => void,
): AssistantBlocks {
  const out: AssistantBlocks = { text: [], reasoning: [], calls: [] };
  for (const b of content) {
    if (!isObject(b)) continue;
    if (b.type === "text" && typeof b.text === "string") out.text.push(b.text);
    else if (b.type === "thinking") {
      if (typeof b.thinking === "string" && b.thinking !== "") out.reasoning.push(b.thinking);
    } else if (b.type === call.type) {
      const id = str(b, "id");
      const name = str(b, "name");
      if (id === undefined || name === undefined) bad(line, `a ${call.type} block without id or name; kept in the source blob only`);
      else out.calls.push({ id, name, args: jsonText(b[call.args]) });
    } else countUnmapped(unmapped, `assistant/${String(b.type)}`);
  }
  return out;
}

/** A JSON value as text for `<args>`: strings as they are, everything else as JSON. */
export function jsonText(v: unknown): string {
  if (typeof v === "string") return v;
  return JSON.stringify(v ?? {});
}

/** True for a plain JSON object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A string field, or undefined. */
export function str(o: Record<string, unknown>, k: string): string | undefined {
  const v = o[k];
  return typeof v === "string" ? v : undefined;
}

/** A finite number field, or undefined. */
export function num(o: Record<string, unknown> | undefined, k: string): number | undefined {
  const v = o?.[k];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The text of a message content that is a string or a list of blocks: its text blocks, an image as `[image]` (Claude Code, Pi). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const b of content) {
    if (isObject(b) && b.type === "text" && typeof b.text === "string") parts.push(b.text);
    else if (isObject(b) && b.type === "image") parts.push("[image]");
  }
  return parts.join("\n");
}

/**
 * The step a key stands for: aliases (records that map to no step, each naming the key it stands
 * for) followed to a key that is no alias; bounded, so a cycle of aliases ends.
 */
export function resolveAlias(aliases: ReadonlyMap<string, string | null>, key: string | null): string | null {
  let k = key;
  for (let n = 0; k !== null && n <= aliases.size && aliases.has(k); n++) k = aliases.get(k) ?? null;
  return k;
}
