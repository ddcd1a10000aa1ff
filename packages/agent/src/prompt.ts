/**
 * Prompts are projections (L8, PR-5 … PR-9): the exact request the engine sends a model is
 * a pure function of the session tree at an event (and the immutable blobs it references). The
 * system prompt comes from the recorded `system` template rendered over the tree; the history
 * from `<body>`, each element contributing through one pure function; the tools from the recorded
 * roster. A call without an outcome at that event gets the recorded `missing` observation, so the
 * request is always valid for a provider — and the log is never rewritten to make it so.
 *
 * A `<compaction through="ID"><summary>…</summary></compaction>` in `<meta>` hides the body
 * children up to and including element ID and puts its summary first.
 */
import type { Element, Tree } from "@strata/dom";
import { type Answer, bodyOf, EngineError, loadTree, metaOf, type Port, type Session, treeBlobRefs } from "@strata/engine";
import { type AsyncStore, type EventId, isAsyncStore, type Store } from "@strata/store";
import { type RecordedInputs, readInputs } from "./inputs.ts";
import type { ChatMessage, ModelRequest, ToolCallRequest, ToolSchema } from "./model.ts";
import { AgentBlobs, fetchBlobs } from "./port.ts";
import { renderTemplate } from "./template/render.ts";
import { type SyntheticObservations, syntheticText } from "./tools/synthetic.ts";
import { ATTR, CALL, META, ROLE, TAG, TURN } from "./vocabulary.ts";

/** Where a projection reads blob bytes from. */
export type BlobText = (hash: string) => string;

/** Statuses of a settled call, and the synthetic text each gets (executed uses its result). */
const SYNTHETIC_FOR: Readonly<Record<string, keyof SyntheticObservations>> = {
  [CALL.notExecuted]: "notExecuted",
  [CALL.envError]: "envError",
  [CALL.interrupted]: "interrupted",
};

/** The observation the model sees for a call element (PR-6). */
export function observationOf(call: Element, synthetic: SyntheticObservations): string {
  const status = call.attrs[ATTR.status] ?? "";
  const tool = call.attrs[ATTR.tool] ?? "";
  if (status === CALL.executed) return call.children.find((c) => c.tag === TAG.result)?.text ?? "";
  const kind = Object.hasOwn(SYNTHETIC_FOR, status) ? SYNTHETIC_FOR[status] : undefined;
  if (kind !== undefined) return syntheticText(synthetic, kind, { tool, detail: call.attrs[ATTR.reason] ?? "" });
  return syntheticText(synthetic, "missing", { tool });
}

function textOf(el: Element): string {
  return el.children.find((c) => c.tag === TAG.text)?.text ?? "";
}

/**
 * What one body element contributes to the history (PR-9). Turns still streaming, failed or
 * interrupted contribute nothing: the request they were answering is the one before them.
 */
export function contribute(el: Element, synthetic: SyntheticObservations): ChatMessage[] {
  if (el.tag !== TAG.turn) return [];
  const role = el.attrs[ATTR.role];
  if (role === ROLE.user) return [{ role: "user", content: textOf(el) }];
  if (role !== ROLE.assistant || el.attrs[ATTR.status] !== TURN.complete) return [];
  const calls = el.children.filter((c) => c.tag === TAG.call);
  const toolCalls: ToolCallRequest[] = calls.map((c) => ({
    id: c.attrs[ATTR.id] ?? "",
    name: c.attrs[ATTR.tool] ?? "",
    arguments: c.children.find((a) => a.tag === TAG.args)?.text ?? "",
  }));
  const out: ChatMessage[] = [
    toolCalls.length > 0 ? { role: "assistant", content: textOf(el), toolCalls } : { role: "assistant", content: textOf(el) },
  ];
  for (const c of calls) out.push({ role: "tool", toolCallId: c.attrs[ATTR.id] ?? "", content: observationOf(c, synthetic) });
  return out;
}

/**
 * Remembers what each body element contributed, so that projecting the next version of a tree
 * costs the elements that changed, not the whole history (the loop projects once per turn). An
 * entry is reused only when everything `contribute` reads is unchanged: the element's tag,
 * attributes, text and first and last child, and its children's and grandchildren's records — the
 * very same objects (versions share unchanged records); the contribution is then
 * the same array of the same messages, which also lets `requestDigest` reuse their hashes. A
 * cache: projecting with or without one gives equal requests (PR-9).
 */
export class ProjectionMemo {
  #entries = new Map<number, { readonly recs: readonly unknown[]; readonly messages: ChatMessage[] }>();
  #synthetic: readonly string[] = [];

  /** `contribute(el, synthetic)` for element `id` of `tree`, from the memo when nothing it reads changed. */
  contribute(tree: Tree, id: number, synthetic: SyntheticObservations, next: Map<number, unknown>): ChatMessage[] {
    const r = tree.rec(id);
    if (r === undefined) return [];
    // The element itself by what it holds (a sibling appended after it changes its record, not its part).
    const recs: unknown[] = [r.tag, r.attrs, r.text, r.first, r.last];
    for (let c = r.first; c !== 0; ) {
      const cr = tree.rec(c);
      if (cr === undefined) break;
      recs.push(cr);
      for (let g = cr.first; g !== 0; ) {
        const gr = tree.rec(g);
        if (gr === undefined) break;
        recs.push(gr);
        g = gr.next;
      }
      c = cr.next;
    }
    const hit = this.#entries.get(id);
    let messages: ChatMessage[];
    if (hit !== undefined && hit.recs.length === recs.length && hit.recs.every((r, i) => r === recs[i])) messages = hit.messages;
    else messages = frozen(contribute(tree.get(id) as Element, synthetic));
    next.set(id, { recs, messages });
    return messages;
  }

  #tools: { readonly key: string; readonly tools: ToolSchema[] } | undefined;

  /** The tool schemas of a roster, the same array while the roster (names and hashes) is the same. */
  tools(roster: RecordedInputs["tools"], build: () => ToolSchema[]): ToolSchema[] {
    const key = roster.map((t) => `${t.name}\u0000${t.descriptionHash}\u0000${t.schemaHash}`).join("\u0001");
    if (this.#tools?.key !== key) this.#tools = { key, tools: Object.freeze(build().map((t) => Object.freeze(t))) as ToolSchema[] };
    return this.#tools.tools;
  }

  /** Starts a projection: entries of a previous one stay valid only under the same synthetic texts. */
  begin(synthetic: SyntheticObservations): Map<number, unknown> {
    const texts = [synthetic.notExecuted, synthetic.envError, synthetic.interrupted, synthetic.missing];
    if (texts.some((t, i) => t !== this.#synthetic[i])) {
      this.#entries = new Map();
      this.#synthetic = texts;
    }
    return new Map();
  }

  /** Ends a projection: only the elements it saw are kept (removed ones are forgotten). */
  end(next: Map<number, unknown>): void {
    this.#entries = next as Map<number, { readonly recs: readonly unknown[]; readonly messages: ChatMessage[] }>;
  }
}

/** Messages a memo shares between requests cannot be changed by whoever receives one (a model client). */
function frozen(messages: ChatMessage[]): ChatMessage[] {
  for (const m of messages) {
    if (m.role === "assistant" && m.toolCalls !== undefined) {
      for (const c of m.toolCalls) Object.freeze(c);
      Object.freeze(m.toolCalls);
    }
    Object.freeze(m);
  }
  return Object.freeze(messages) as ChatMessage[];
}

/** The history of a tree: compaction summary (if any), then each visible body element's part. */
export function projectMessages(tree: Tree, synthetic: SyntheticObservations, memo?: ProjectionMemo): ChatMessage[] {
  if (memo !== undefined) return projectWithMemo(tree, synthetic, memo);
  const messages: ChatMessage[] = [];
  const body = bodyOf(tree);
  const compaction = metaOf(tree).children.findLast((c) => c.tag === META.compaction);
  // The visible history starts after the compacted element (when it is a child of <body>): the
  // elements it hides are not visited (their cost is not the prompt's).
  let start = tree.rec(body.id)?.first ?? 0;
  if (compaction !== undefined) {
    const through = tree.rec(Number(compaction.attrs[ATTR.through]));
    if (through !== undefined && through.parent === body.id) {
      const summary = compaction.children.find((c) => c.tag === META.summary)?.text ?? "";
      messages.push({ role: "user", content: `Summary of the conversation so far:\n${summary}` });
      start = through.next;
    }
  }
  for (let id = start; id !== 0; ) {
    const el = tree.get(id);
    if (el === undefined) break;
    messages.push(...contribute(el, synthetic));
    id = tree.rec(id)?.next ?? 0;
  }
  return messages;
}

/** The same history as {@link projectMessages}, reading each unchanged element's part from `memo`. */
function projectWithMemo(tree: Tree, synthetic: SyntheticObservations, memo: ProjectionMemo): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const body = bodyOf(tree);
  const compaction = metaOf(tree).children.findLast((c) => c.tag === META.compaction);
  let start = tree.rec(body.id)?.first ?? 0;
  const through = compaction === undefined ? undefined : tree.rec(Number(compaction.attrs[ATTR.through]));
  if (compaction !== undefined && through !== undefined && through.parent === body.id) {
    const summary = compaction.children.find((c) => c.tag === META.summary)?.text ?? "";
    messages.push({ role: "user", content: `Summary of the conversation so far:\n${summary}` });
    start = through.next; // the hidden elements are not visited
  }
  const next = memo.begin(synthetic);
  for (let id = start; id !== 0; ) {
    const r = tree.rec(id);
    if (r === undefined) break;
    for (const m of memo.contribute(tree, id, synthetic, next)) messages.push(m);
    id = r.next;
  }
  memo.end(next);
  return messages;
}

/** The request a model is sent at this tree (PR-7). A memo (see {@link ProjectionMemo}) only makes it cheaper. */
export function projectRequest(tree: Tree, blob: BlobText, inputs: RecordedInputs = readInputs(tree), memo?: ProjectionMemo): ModelRequest {
  const context: Record<string, string> = {};
  for (const [path, hash] of inputs.context) context[path] = blob(hash);
  const build = (): ToolSchema[] =>
    inputs.tools.map((t) => ({
      name: t.name,
      description: blob(t.descriptionHash),
      parameters: JSON.parse(blob(t.schemaHash)) as Record<string, unknown>,
    }));
  const tools = memo === undefined ? build() : memo.tools(inputs.tools, build);
  const systemHash = inputs.templates.get("system");
  const system =
    systemHash === undefined
      ? ""
      : renderTemplate(blob(systemHash), tree, {
          name: "system",
          vars: { context, tools: tools.map((t) => t.name), settings: { ...inputs.settings }, model: { ...(inputs.model ?? {}) } },
        });
  return {
    system,
    messages: projectMessages(tree, inputs.synthetic, memo),
    tools,
    settings: inputs.model ?? { provider: "", model: "" },
  };
}

/**
 * A blob reader over a store. Over the asynchronous port it reads what was fetched (the loop
 * fetches {@link inputBlobs} before each projection).
 */
export function blobReader(store: Port): BlobText {
  return (hash) => AgentBlobs.of(store).text(hash);
}

/** The blobs a projection reads: the recorded templates, context files and tools' descriptions and schemas. */
export function inputBlobs(inputs: RecordedInputs): string[] {
  return [...inputs.templates.values(), ...inputs.context.values(), ...inputs.tools.flatMap((t) => [t.descriptionHash, t.schemaHash])];
}

/**
 * The exact request the model saw (or would see) at an event of the session (default: the head
 * of the session's branch, or of `branch`). Throws `TemplateError` when the recorded template does
 * not render on that tree. Over the asynchronous port (PostgreSQL) it answers a promise: the tree
 * is loaded whole and the blobs it names are fetched in one call before it is rendered.
 */
export function renderPrompt<P extends Port>(
  session: Session<P>,
  options: { at?: EventId; branch?: string } = {},
): Answer<P, ModelRequest> {
  if (isAsyncStore(session.store)) return renderPromptAsync(session as Session<AsyncStore>, options) as Answer<P, ModelRequest>;
  const s = session as Session<Store>;
  let tree: Tree;
  if (options.at !== undefined) tree = s.at(options.at);
  else if (options.branch !== undefined && options.branch !== s.branch) tree = s.at(branchHead(s.id, s.branches(), options.branch));
  else tree = s.durableTree;
  return projectRequest(tree, blobReader(s.store)) as Answer<P, ModelRequest>;
}

async function renderPromptAsync(session: Session<AsyncStore>, options: { at?: EventId; branch?: string }): Promise<ModelRequest> {
  let tree: Tree;
  if (options.at !== undefined) tree = await session.at(options.at);
  else if (options.branch !== undefined && options.branch !== session.branch)
    tree = await session.at(branchHead(session.id, await session.branches(), options.branch));
  else tree = session.durableTree;
  await loadTree(tree);
  // The blobs a projection reads (templates, context files, tool descriptions, long results), fetched first.
  const blobs = await fetchBlobs(session.store, treeBlobRefs(tree));
  return projectRequest(tree, (hash) => blobs.text(hash));
}

function branchHead(session: string, branches: readonly { name: string; head: EventId }[], name: string): EventId {
  const head = branches.find((b) => b.name === name);
  if (head === undefined) throw new EngineError("not-found", `session ${session} has no branch named ${name}`);
  return head.head;
}

/**
 * The system template used when a run names none. It reads only the tree and the recorded
 * context files, like any template (the article's line is the plan's first bullet).
 */
export const DEFAULT_SYSTEM_TEMPLATE = `{#- strata's default system prompt: a projection of the session tree. -#}
You are a careful coding agent. You work only through the tools listed below, inside the workspace.
Keep a plan with the todo tool (always send the whole list), and call submit when the task is done.
{%- for path, text in context %}

## {{ path }}
{{ text | trim }}
{%- endfor %}

## Tools
{% for tool in select("meta > config > tools > tool") -%}
- {{ tool.attrs.name }}{% if tool.attrs["completes-run"] == "true" %} (ends the run){% endif %}
{% endfor %}
## Plan
- {{ count(select("todo item[status!=completed]")) }} open items
{% for item in select("meta > todo > item") -%}
{{ loop.index }}. [{{ "x" if item.attrs.status == "completed" else " " }}] {{ item.text | trim }}{% if item.attrs.status == "in_progress" %}  (in progress){% endif %}
{% endfor %}`;
