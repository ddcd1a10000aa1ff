/**
 * Every run input is in the tree (L4, PR-1, PR-2). What shapes what the model sees or what a tool
 * does is recorded as elements of `<meta><config>`: templates and context files by content hash
 * (bytes in the blob store), the tool roster (name, version, description and schema hashes, replay
 * policy, completes-run), model settings, session settings and the synthetic observations. A run
 * that starts or resumes calls `recordInputs` with what it is about to use; anything that differs
 * from the record is updated by one visible patch before it is used — never silently.
 *
 *   <config>
 *     <model provider="openai" model="gpt-4o-mini" temperature="0"/>
 *     <settings max-steps="20" budget-tokens="200000" workspace="/w"/>
 *     <templates><template name="system" hash="…" chars="812"/></templates>
 *     <context><file path="AGENTS.md" hash="…" chars="140"/></context>
 *     <tools><tool name="read_file" version="1" replay="safe" completes-run="false"
 *                  description="…hash" schema="…hash"/></tools>
 *     <synthetic><observation kind="interrupted">…</observation></synthetic>
 *   </config>
 */
import { type Element, type NodeId, type NodeSpec, type Op, type Tree, TreeDraft } from "@strata/dom";
import { type Answer, metaOf, type Port, type Session } from "@strata/engine";
import { drive, type EventMeta, isAsyncStore, type Store, value } from "@strata/store";
import type { ModelSettings } from "./model.ts";
import { AgentBlobs, type AnySession, missingBlob } from "./port.ts";
import { canonicalJson } from "./tools/canonical.ts";
import type { ReplayPolicy, ToolSpec } from "./tools/registry.ts";
import { DEFAULT_SYNTHETIC, type SyntheticObservations } from "./tools/synthetic.ts";
import { CALL, LABEL } from "./vocabulary.ts";

/** What a run is about to use. Each section given replaces that section of the record. */
export interface RunInputs {
  /** Template name → source (the prompt uses `system`). */
  readonly templates?: Readonly<Record<string, string>>;
  /** Context file path (as shown to the model) → content, e.g. `AGENTS.md`. */
  readonly context?: Readonly<Record<string, string>>;
  readonly tools?: readonly ToolSpec[];
  readonly model?: ModelSettings;
  /** Session settings (max steps, budget, workspace …), recorded as attributes. */
  readonly settings?: Readonly<Record<string, string | number | boolean>>;
  readonly synthetic?: SyntheticObservations;
}

/** A roster entry as recorded. */
export interface RecordedTool {
  readonly name: string;
  readonly version: string;
  readonly replayPolicy: ReplayPolicy;
  readonly completesRun: boolean;
  readonly descriptionHash: string;
  readonly schemaHash: string;
}

/** The inputs as the tree records them (hashes; bytes are in the blob store). */
export interface RecordedInputs {
  readonly model: ModelSettings | undefined;
  readonly settings: Readonly<Record<string, string>>;
  readonly templates: ReadonlyMap<string, string>;
  readonly context: ReadonlyMap<string, string>;
  readonly tools: readonly RecordedTool[];
  readonly synthetic: SyntheticObservations;
}

const SYNTHETIC_KINDS: Record<keyof SyntheticObservations, string> = {
  notExecuted: CALL.notExecuted,
  envError: CALL.envError,
  interrupted: CALL.interrupted,
  missing: "missing",
};

function child(el: Element | undefined, tag: string): Element | undefined {
  return el?.children.find((c) => c.tag === tag);
}

/** Reads the recorded inputs of a tree (empty sections when nothing was recorded). */
export function readInputs(tree: Tree): RecordedInputs {
  const config = child(metaOf(tree), "config");
  const model = child(config, "model");
  const settings = child(config, "settings");
  const synthetic: Record<string, string> = { ...DEFAULT_SYNTHETIC };
  for (const o of child(config, "synthetic")?.children ?? []) {
    const key = (Object.keys(SYNTHETIC_KINDS) as (keyof SyntheticObservations)[]).find((k) => SYNTHETIC_KINDS[k] === o.attrs.kind);
    if (key !== undefined) synthetic[key] = o.text;
  }
  return {
    model: model === undefined ? undefined : modelFromAttrs(model.attrs),
    settings: settings === undefined ? {} : { ...settings.attrs },
    templates: new Map((child(config, "templates")?.children ?? []).map((t) => [t.attrs.name ?? "", t.attrs.hash ?? ""])),
    context: new Map((child(config, "context")?.children ?? []).map((f) => [f.attrs.path ?? "", f.attrs.hash ?? ""])),
    tools: (child(config, "tools")?.children ?? []).map((t) => ({
      name: t.attrs.name ?? "",
      version: t.attrs.version ?? "1",
      replayPolicy: t.attrs.replay === "safe" ? "safe" : "never",
      completesRun: t.attrs["completes-run"] === "true",
      descriptionHash: t.attrs.description ?? "",
      schemaHash: t.attrs.schema ?? "",
    })),
    synthetic: synthetic as unknown as SyntheticObservations,
  };
}

function modelFromAttrs(a: Readonly<Record<string, string>>): ModelSettings {
  return {
    provider: a.provider ?? "",
    model: a.model ?? "",
    ...(a.temperature !== undefined ? { temperature: Number(a.temperature) } : {}),
    ...(a["max-tokens"] !== undefined ? { maxTokens: Number(a["max-tokens"]) } : {}),
  };
}

function modelAttrs(m: ModelSettings): Record<string, string> {
  const out: Record<string, string> = { provider: m.provider, model: m.model };
  if (m.temperature !== undefined) out.temperature = String(m.temperature);
  if (m.maxTokens !== undefined) out["max-tokens"] = String(m.maxTokens);
  return out;
}

/** Sets `el`'s attributes to exactly `want` (in the draft), touching only what differs. */
function syncAttrs(d: TreeDraft, id: NodeId, want: Readonly<Record<string, string>>): void {
  const have = d.get(id)?.attrs ?? {};
  for (const k of Object.keys(have)) if (!(k in want)) d.set(id, k, null);
  for (const [k, v] of Object.entries(want)) if (have[k] !== v) d.set(id, k, v);
}

/** Finds or creates `<tag>` under `parent` in the draft. */
function ensure(d: TreeDraft, parent: NodeId, tag: string): NodeId {
  const found = d.get(parent)?.children.find((c) => c.tag === tag);
  return found !== undefined ? found.id : d.appendChild(parent, { tag });
}

/** Makes the keyed children of `section` exactly `items` (updating in place, adding, removing). */
function syncKeyed(
  d: TreeDraft,
  section: NodeId,
  tag: string,
  key: string,
  items: readonly Record<string, string>[],
  text?: (i: number) => string,
): void {
  const existing = new Map<string, NodeId>();
  for (const c of d.get(section)?.children ?? []) if (c.tag === tag) existing.set(c.attrs[key] ?? "", c.id);
  const keep = new Set<string>();
  items.forEach((attrs, i) => {
    const k = attrs[key] as string;
    keep.add(k);
    const id = existing.get(k);
    const spec: NodeSpec = text === undefined ? { tag, attrs } : { tag, attrs, text: text(i) };
    if (id === undefined) d.appendChild(section, spec);
    else {
      syncAttrs(d, id, attrs);
      if (text !== undefined && d.get(id)?.text !== text(i)) d.text(id, text(i));
    }
  });
  for (const [k, id] of existing) if (!keep.has(k)) d.remove(id);
}

/**
 * Records `inputs` in the session (blobs first, then one patch `inputs.record` — or
 * `inputs.update` when something was recorded before). Returns the event, or `undefined` when
 * the record already matches (nothing is appended). Over the asynchronous port it answers a
 * promise, and loads the tree first (`session.load()`).
 */
export function recordInputs<P extends Port>(
  session: Session<P>,
  inputs: RunInputs,
  options: { by?: string } = {},
): Answer<P, EventMeta | undefined> {
  return drive(recordInputsSteps(session, inputs, options)) as Answer<P, EventMeta | undefined>;
}

function* recordInputsSteps(session: AnySession, inputs: RunInputs, options: { by?: string }): Generator<unknown, EventMeta | undefined> {
  if (isAsyncStore(session.store)) yield* value(session.load());
  const patch = inputsPatch(session, inputs);
  if (patch === undefined) return undefined;
  yield* AgentBlobs.of(session.store).flushSteps();
  return yield* value(session.commit(patch.ops, { label: patch.label, ...(options.by !== undefined ? { by: options.by } : {}) }));
}

/**
 * The patch that makes the session's record match `inputs` (its blobs are put now: over the
 * asynchronous port, written by the next `AgentBlobs` flush), for a caller that commits it
 * together with other patches (`startRun`: inputs and task as one group). `undefined` when the
 * record already matches.
 */
export function inputsPatch(session: AnySession, inputs: RunInputs): { ops: readonly Op[]; label: string } | undefined {
  const blobs = AgentBlobs.of(session.store);
  const store = { putBlob: (text: string) => blobs.put(text) };
  const templates = Object.entries(inputs.templates ?? {}).map(([name, source]) => ({
    name,
    hash: store.putBlob(source),
    chars: String(source.length),
  }));
  const context = Object.entries(inputs.context ?? {}).map(([path, text]) => ({
    path,
    hash: store.putBlob(text),
    chars: String(text.length),
  }));
  const tools = (inputs.tools ?? []).map((t) => ({
    name: t.name,
    version: t.version ?? "1",
    replay: t.replayPolicy ?? "never",
    "completes-run": String(t.completesRun ?? false),
    description: store.putBlob(t.description),
    schema: store.putBlob(canonicalJson(t.parameters)),
  }));
  const before = session.tree;
  const hadConfig = child(metaOf(before), "config") !== undefined;
  // Authored once on a draft of the current tree; an unchanged record appends nothing.
  const d = new TreeDraft(before);
  const meta = metaOf(d.tree).id;
  const config = ensure(d, meta, "config");
  if (inputs.model !== undefined) syncAttrs(d, ensure(d, config, "model"), modelAttrs(inputs.model));
  if (inputs.settings !== undefined)
    syncAttrs(d, ensure(d, config, "settings"), Object.fromEntries(Object.entries(inputs.settings).map(([k, v]) => [k, String(v)])));
  if (inputs.templates !== undefined) syncKeyed(d, ensure(d, config, "templates"), "template", "name", templates);
  if (inputs.context !== undefined) syncKeyed(d, ensure(d, config, "context"), "file", "path", context);
  if (inputs.tools !== undefined) syncKeyed(d, ensure(d, config, "tools"), "tool", "name", tools);
  if (inputs.synthetic !== undefined) {
    const kinds = Object.keys(SYNTHETIC_KINDS) as (keyof SyntheticObservations)[];
    const synth = inputs.synthetic;
    syncKeyed(
      d,
      ensure(d, config, "synthetic"),
      "observation",
      "kind",
      kinds.map((k) => ({ kind: SYNTHETIC_KINDS[k] })),
      (i) => synth[kinds[i] as keyof SyntheticObservations],
    );
  }
  if (d.ops.length === 0) return undefined;
  return { ops: d.ops, label: hadConfig ? LABEL.inputsUpdate : LABEL.inputsRecord };
}

const blobCaches = new WeakMap<Store, Map<string, string>>();

/** The text of blob `hash`, through a small per-store cache (blobs are immutable). */
export function blobText(store: Store, hash: string): string {
  let cache = blobCaches.get(store);
  if (cache === undefined) blobCaches.set(store, (cache = new Map()));
  const hit = cache.get(hash);
  if (hit !== undefined) return hit;
  const bytes = store.getBlob(hash);
  if (bytes === undefined) throw missingBlob(hash, store.path);
  const text = bytes.toString("utf8");
  if (cache.size > 256) cache.delete(cache.keys().next().value as string);
  cache.set(hash, text);
  return text;
}
