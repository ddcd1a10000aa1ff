/**
 * A foreign session into a strata session (IM-2 … IM-8): one `Session.create` whose `init` writes
 * everything — so the whole import is one store transaction, and a failure stores nothing (IM-7).
 *
 *   <meta><import from version source-id file sha256 records unmapped unrecorded>
 *           <diag kind="source" path hash chars/>…      the source, verbatim, as blobs (IM-4)
 *         </import>
 *         <config><model …/>… (when the source recorded them)</config>
 *         <compaction through="ID"><summary>…</summary></compaction></meta>
 *   <body><turn role="user" ref line><text>…</text></turn>
 *         <turn role="assistant" status="complete" model ref line>
 *           <reasoning/> <text/> <call id tool index replay="never" status ref line><args/><result ref line/></call>
 *           <usage input output cache-read cache-write cost/></turn></body>
 *
 * Every element made from a record carries the record's `line` (and `file` for a directory
 * source; a call that is a record of its own names that one), so the verbatim record is one
 * lookup away. Steps are written in order: the line of history to the source's current leaf on
 * `main`, then the others; a step whose parent is not the head of a line being written, or that
 * names a line of its own, starts a branch there (`Session.fork`, IM-6). Consecutive steps of one
 * line are one group commit; each step is one event with the source's timestamp.
 */
import { ATTR, CALL, LABEL, META, ROLE, recordInputs, TAG, TURN } from "@strata/agent";
import { sanitizeText as clean, type NodeId, type NodeSpec, type TreeDraft } from "@strata/dom";
import { bodyOf, metaOf, Session } from "@strata/engine";
import type { EventId, SessionId, Store } from "@strata/store";
import { type ForeignSession, type ImportProblem, resolveAlias, type Step } from "./foreign.ts";

/** The names this package adds to the agent's vocabulary (IM-3). */
export const IMPORT = Object.freeze({
  /** `<meta><import>`: where the session came from. */
  tag: "import",
  /** `<diag kind="source">`: one source file, verbatim, as a blob. */
  sourceDiag: "source",
  label: { source: "import.source", compaction: "import.compaction", model: LABEL.inputsUpdate, end: "import.end" },
  /** The system template an imported session records when the source recorded its system prompt (IM-8). */
  systemTemplate: '{{ context["system"] }}',
} as const);

/** One source file of a session, stored as a blob. */
export interface SourceFile {
  /** The path recorded (as given, relative to what was imported for a directory). */
  readonly path: string;
  /** The file as text (what the reader parsed). */
  readonly text: string;
  /**
   * The file's bytes as read, which the blob holds (IM-4): byte for byte, also where they are not
   * valid UTF-8 and `text` has U+FFFD instead. Absent: the UTF-8 of `text` (a source made as text,
   * OpenCode's canonical one).
   */
  readonly bytes?: Uint8Array;
}

export interface WriteOptions {
  /** The sha256 of the source: the file's bytes; for an OpenCode session, of its canonical text (IM-19). */
  readonly sha256: string;
  /** The path recorded for the source. */
  readonly file: string;
  readonly sources: readonly SourceFile[];
}

export interface Written {
  readonly session: SessionId;
  readonly branches: number;
  readonly events: number;
  /** Problems found while writing (a result for a call the source never made …). */
  readonly problems: ImportProblem[];
}

interface Line {
  readonly session: Session;
  /** Steps committed on it but not yet flushed. */
  pending: Step[];
}

const BY = "import";

/** Writes `foreign` as a new session of `store`; everything in one transaction (IM-7). */
export function writeSession(store: Store, foreign: ForeignSession, options: WriteOptions): Written {
  const problems: ImportProblem[] = [];
  let branches = 1;
  let events = 0;
  const session = Session.create(store, {
    title: foreign.title ?? null,
    metadata: {
      import: {
        from: foreign.from,
        version: foreign.version,
        sourceId: foreign.sourceId,
        file: options.file,
        sha256: options.sha256,
        ...(foreign.links === undefined ? {} : { links: foreign.links }),
      },
    },
    snapshotEvery: 1024,
    init: (main) => {
      main.commit((d) => writeSource(main, d, foreign, options), { label: IMPORT.label.source, by: BY });
      events++;
      // The system prompt the source recorded, as the session's recorded inputs (IM-8).
      if (
        foreign.system !== undefined &&
        recordInputs(main, { templates: { system: IMPORT.systemTemplate }, context: { system: foreign.system } }, { by: BY }) !== undefined
      )
        events++;
      // Where every line of its own starts: after the record of the source (a sidechain sees only its own history).
      const base = main.head.id;
      const { ordered, promoted } = order(foreign);
      const eventOf = new Map<string, EventId>();
      const byHead = new Map<EventId, Line>();
      const names = new Set<string>(["main"]);
      const mainLine: Line = { session: main, pending: [] };
      byHead.set(main.head.id, mainLine);
      const reported = new Set<string>();
      const report = (p: ImportProblem): void => {
        const k = `${p.file}\u0000${p.line}\u0000${p.message}`;
        if (!reported.has(k)) {
          reported.add(k);
          problems.push(p);
        }
      };
      // The line a step goes on: the one whose last step is its parent, else a new branch there.
      let current: Line | undefined;
      let currentLast: string | undefined;
      const flush = (): void => {
        if (current === undefined || current.pending.length === 0) return;
        const steps = current.pending;
        current.pending = [];
        const before = current.session.head.id;
        const metas = current.session.commitMany(
          steps.map((step) => ({
            change: (d: TreeDraft) => applyStep(d, step, options.file, report),
            label: labelOf(step),
            by: BY,
            ...(step.ts === undefined ? {} : { ts: step.ts }),
          })),
        );
        events += metas.length;
        for (const [i, s] of steps.entries()) eventOf.set(s.key, (metas[i] as { id: EventId }).id);
        // (a line forked at another's head shares that event with it until it moves)
        if (byHead.get(before) === current) byHead.delete(before);
        byHead.set(current.session.head.id, current);
      };
      for (const step of ordered) {
        const parent = resolve(foreign, step.parent);
        // A named line always starts a branch of its own, even at the head of the line it leaves.
        const own = step.lineName !== undefined && !promoted.has(step.key);
        if (!own && current !== undefined && parent !== null && parent === currentLast) {
          current.pending.push(step);
          currentLast = step.key;
          continue;
        }
        flush();
        let at: EventId = base;
        if (parent !== null) {
          const e = eventOf.get(parent);
          if (e === undefined)
            report({
              file: step.file ?? options.file,
              line: step.line,
              message: `its parent ${parent} is not in the source; it starts a line of its own`,
            });
          else at = e;
        }
        let line = own ? undefined : byHead.get(at);
        if (line === undefined) {
          const name = freeName(names, step.lineName ?? `fork-${branches}`);
          line = { session: main.fork(at, { name }), pending: [] };
          branches++;
        }
        current = line;
        current.pending.push(step);
        currentLast = step.key;
      }
      flush();
      // Calls the recording never answered: settled, so no line ends with live work (IM-2).
      for (const l of new Set(byHead.values()))
        if (l.session.live.size > 0) {
          l.session.commit((d) => settleOpenCalls(d), { label: IMPORT.label.end, by: BY });
          events++;
        }
    },
  });
  return { session: session.id, branches, events, problems };
}

/**
 * Steps in writing order: the path to the source's current leaf first (it becomes `main`), then
 * the rest in source order. When every step is on a line of its own (a sub-agent's transcript
 * imported alone, a file of sidechains only), the last step's line is `main`: `promoted` holds the
 * line roots on that path, which then start no branch.
 */
function order(foreign: ForeignSession): { ordered: Step[]; promoted: Set<string> } {
  const byKey = new Map(foreign.steps.map((s) => [s.key, s]));
  const main = new Set<string>();
  const promoted = new Set<string>();
  const onSide = sideLines(foreign, byKey);
  // The current leaf: the last step of the source that starts no line of its own (a sidechain).
  let leaf: Step | undefined;
  for (let i = foreign.steps.length - 1; i >= 0 && leaf === undefined; i--) {
    const s = foreign.steps[i] as Step;
    if (!onSide(s)) leaf = s;
  }
  const fallback = leaf === undefined;
  if (fallback) leaf = foreign.steps.at(-1);
  for (let s = leaf; s !== undefined && !main.has(s.key); ) {
    main.add(s.key);
    if (fallback && s.lineName !== undefined) promoted.add(s.key);
    const p = resolve(foreign, s.parent);
    s = p === null ? undefined : byKey.get(p);
  }
  return { ordered: [...foreign.steps.filter((s) => main.has(s.key)), ...foreign.steps.filter((s) => !main.has(s.key))], promoted };
}

/**
 * Whether a step's line starts with a named line of its own (a sidechain, a child agent): each
 * step's answer is remembered, so asking for every step walks each path once.
 */
function sideLines(foreign: ForeignSession, byKey: ReadonlyMap<string, Step>): (step: Step) => boolean {
  const known = new Map<string, boolean>();
  return (step) => {
    const path: string[] = [];
    let side = false;
    for (let s: Step | undefined = step; s !== undefined && path.length <= byKey.size; ) {
      const k = known.get(s.key);
      if (k !== undefined) {
        side = k;
        break;
      }
      path.push(s.key);
      if (s.lineName !== undefined) {
        side = true;
        break;
      }
      const p = resolve(foreign, s.parent);
      s = p === null ? undefined : byKey.get(p);
    }
    for (const k of path) known.set(k, side);
    return side;
  };
}

/** Follows aliases (records that map to no step) to the step a parent key stands for. */
function resolve(foreign: ForeignSession, key: string | null): string | null {
  return resolveAlias(foreign.aliases, key);
}

function freeName(names: Set<string>, want: string): string {
  let name = want;
  for (let i = 2; names.has(name); i++) name = `${want}-${i}`;
  names.add(name);
  return name;
}

function labelOf(step: Step): string {
  switch (step.kind) {
    case "user":
      return LABEL.turnUser;
    case "assistant":
      return step.error !== undefined ? LABEL.turnFailed : LABEL.turnEnd;
    case "results":
      return LABEL.callOutcome;
    case "compaction":
      return IMPORT.label.compaction;
    case "model":
      return IMPORT.label.model;
    default:
      return step satisfies never;
  }
}

/** The `<meta><import>` record with the source blobs (IM-3, IM-4). */
function writeSource(main: Session, d: TreeDraft, foreign: ForeignSession, options: WriteOptions): void {
  const meta = metaOf(d.tree).id;
  const unrecorded = [...(foreign.system === undefined ? ["system"] : []), "tools"];
  const attrs: Record<string, string> = {
    from: foreign.from,
    version: clean(foreign.version),
    "source-id": clean(foreign.sourceId),
    file: clean(options.file),
    sha256: options.sha256,
    records: String(foreign.steps.length),
    unrecorded: unrecorded.join(" "),
  };
  if (foreign.unmapped.size > 0) attrs.unmapped = [...foreign.unmapped].map(([t, n]) => `${clean(t).replace(/\s/g, "_")}:${n}`).join(" ");
  if (foreign.cwd !== undefined) attrs.cwd = clean(foreign.cwd);
  for (const [k, v] of Object.entries(foreign.links ?? {})) attrs[k] = clean(v);
  const children: NodeSpec[] = options.sources.map((s) => ({
    tag: TAG.diag,
    attrs: { kind: IMPORT.sourceDiag, path: clean(s.path), hash: main.store.putBlob(s.bytes ?? s.text), chars: String(s.text.length) },
  }));
  d.appendChild(meta, { tag: IMPORT.tag, attrs, children });
}

type Report = (p: ImportProblem) => void;

/** One step as edits of the draft (a pure function of the draft: the writer may author it twice). */
function applyStep(d: TreeDraft, step: Step, sourceFile: string, report: Report): void {
  const body = bodyOf(d.tree).id;
  const where = (el: Record<string, string>): Record<string, string> => {
    el.line = String(step.line);
    if (step.file !== undefined) el.file = clean(step.file);
    return el;
  };
  const ref = clean(step.ref ?? step.key);
  switch (step.kind) {
    case "user": {
      const attrs = where({ [ATTR.role]: ROLE.user, ref });
      if (step.origin !== undefined) attrs.origin = step.origin;
      d.appendChild(body, { tag: TAG.turn, attrs, children: [{ tag: TAG.text, text: clean(step.text) }] });
      return;
    }
    case "assistant": {
      const last = d.tree.rec(d.tree.rec(body)?.last ?? 0);
      const group = step.group ?? step.ref ?? step.key;
      let turn: NodeId;
      if (
        last !== undefined &&
        step.group !== undefined &&
        last.tag === TAG.turn &&
        last.attrs[ATTR.role] === ROLE.assistant &&
        last.attrs.ref === clean(group)
      )
        turn = last.id as NodeId;
      else {
        const attrs = where({ [ATTR.role]: ROLE.assistant, [ATTR.status]: TURN.complete, ref: clean(group) });
        if (step.model !== undefined) attrs[ATTR.model] = clean(step.model);
        turn = d.appendChild(body, { tag: TAG.turn, attrs });
      }
      const el = d.get(turn);
      const kids = el?.children ?? [];
      if (step.reasoning !== "") {
        const r = kids.find((c) => c.tag === TAG.reasoning);
        if (r === undefined) d.insert(turn, null, { tag: TAG.reasoning, text: clean(step.reasoning) });
        else d.appendText(r.id, clean(`\n\n${step.reasoning}`));
      }
      if (step.text !== "") {
        const t = kids.find((c) => c.tag === TAG.text);
        if (t === undefined) {
          const r = d.get(turn)?.children.find((c) => c.tag === TAG.reasoning);
          d.insert(turn, r?.id ?? null, { tag: TAG.text, text: clean(step.text) });
        } else d.appendText(t.id, clean(`\n\n${step.text}`));
      }
      const usage = kids.find((c) => c.tag === TAG.usage);
      let index = kids.filter((c) => c.tag === TAG.call).length;
      for (const c of step.calls) {
        const attrs: Record<string, string> = {
          [ATTR.id]: clean(c.id),
          [ATTR.tool]: clean(c.name),
          [ATTR.index]: String(index++),
          [ATTR.replay]: "never",
          [ATTR.status]: step.error === undefined ? CALL.pending : CALL.interrupted,
          ref,
        };
        if (c.at === undefined) where(attrs);
        else {
          // The call is a record of its own (an OpenCode tool part): it names that record.
          attrs.ref = clean(c.at.ref);
          attrs.line = String(c.at.line);
          if (c.at.file !== undefined) attrs.file = clean(c.at.file);
        }
        for (const [k, v] of Object.entries(c.links ?? {})) attrs[k] = clean(v);
        const spec: NodeSpec = { tag: TAG.call, attrs, children: [{ tag: TAG.args, text: clean(c.args) }] };
        const lastKid = d
          .get(turn)
          ?.children.filter((k) => k.tag !== TAG.usage && k.tag !== TAG.diag)
          .at(-1);
        d.insert(turn, lastKid?.id ?? null, spec);
      }
      if (step.usage !== undefined) {
        // Repeated on every line of one response: the last one is the response's (never summed).
        if (usage !== undefined) d.remove(usage.id);
        const u: Record<string, string> = { [ATTR.input]: String(step.usage.input), [ATTR.output]: String(step.usage.output) };
        if (step.usage.cacheRead !== undefined) u["cache-read"] = String(step.usage.cacheRead);
        if (step.usage.cacheWrite !== undefined) u["cache-write"] = String(step.usage.cacheWrite);
        if (step.usage.reasoning !== undefined) u.reasoning = String(step.usage.reasoning);
        if (step.usage.cost !== undefined) u.cost = String(step.usage.cost);
        d.appendChild(turn, { tag: TAG.usage, attrs: u });
      }
      if (step.finish !== undefined) d.set(turn, ATTR.finish, clean(step.finish));
      if (step.error !== undefined) {
        d.set(turn, ATTR.status, TURN.failed);
        d.appendChild(turn, { tag: TAG.diag, attrs: { [ATTR.kind]: "model-error" }, text: clean(step.error) });
      }
      return;
    }
    case "results": {
      for (const r of step.results) {
        const call = findCall(d, body, r.callId);
        const file = step.file ?? sourceFile;
        if (call === undefined) {
          report({
            file,
            line: step.line,
            message: `a result for call ${r.callId}, which no earlier record on its line makes; kept in the source blob only`,
          });
          continue;
        }
        if (d.get(call)?.children.some((c) => c.tag === TAG.result)) {
          report({ file, line: step.line, message: `a second result for call ${r.callId}; the first is kept in the tree` });
          continue;
        }
        d.set(call, ATTR.status, CALL.executed);
        if (r.isError) d.set(call, ATTR.error, "tool-error");
        d.appendChild(call, { tag: TAG.result, attrs: where({ ref }), text: clean(r.output) });
      }
      return;
    }
    case "compaction": {
      const through = compactedThrough(d, body, step.firstKept);
      const meta = metaOf(d.tree).id;
      if (through === undefined) {
        // Nothing before it to hide: the summary is the first thing the model reads, as a user turn.
        d.appendChild(body, {
          tag: TAG.turn,
          attrs: where({ [ATTR.role]: ROLE.user, ref, origin: "compaction" }),
          children: [{ tag: TAG.text, text: clean(step.summary) }],
        });
        return;
      }
      d.appendChild(meta, {
        tag: META.compaction,
        attrs: where({ [ATTR.through]: String(through), ref }),
        children: [{ tag: META.summary, text: clean(step.summary) }],
      });
      return;
    }
    case "model": {
      const meta = metaOf(d.tree).id;
      const config = d.get(meta)?.children.find((c) => c.tag === "config")?.id ?? d.appendChild(meta, { tag: "config" });
      const model = d.get(config)?.children.find((c) => c.tag === "model");
      if (model === undefined) d.appendChild(config, { tag: "model", attrs: { provider: clean(step.provider), model: clean(step.model) } });
      else {
        if (model.attrs.provider !== step.provider) d.set(model.id, "provider", clean(step.provider));
        if (model.attrs.model !== step.model) d.set(model.id, "model", clean(step.model));
      }
      return;
    }
    default:
      step satisfies never;
  }
}

/** The call with provider id `id`, searched from the end of the body (results follow their calls closely). */
function findCall(d: TreeDraft, body: number, id: string): NodeId | undefined {
  const want = clean(id);
  const tree = d.tree;
  for (let t = tree.rec(body)?.last ?? 0; t !== 0; ) {
    const r = tree.rec(t);
    if (r === undefined) break;
    if (r.tag === TAG.turn)
      for (let c = r.last; c !== 0; ) {
        const cr = tree.rec(c);
        if (cr === undefined) break;
        if (cr.tag === TAG.call && cr.attrs[ATTR.id] === want && cr.attrs[ATTR.status] !== CALL.interrupted) return cr.id as NodeId;
        c = cr.prev;
      }
    t = r.prev;
  }
  return undefined;
}

/**
 * The body element a compaction hides through: the one before the element made from `firstKept`
 * (Pi), or the last one (Claude Code: everything before the summary). Undefined: nothing to hide.
 */
function compactedThrough(d: TreeDraft, body: number, firstKept: string | undefined): number | undefined {
  const tree = d.tree;
  const last = tree.rec(body)?.last ?? 0;
  if (firstKept === undefined) return last === 0 ? undefined : last;
  const want = clean(firstKept);
  for (let t = last; t !== 0; ) {
    const r = tree.rec(t);
    if (r === undefined) break;
    if (r.attrs.ref === want || holdsRef(d, t, want)) return r.prev === 0 ? undefined : r.prev;
    t = r.prev;
  }
  return last === 0 ? undefined : last;
}

function holdsRef(d: TreeDraft, id: number, ref: string): boolean {
  const tree = d.tree;
  for (let c = tree.rec(id)?.first ?? 0; c !== 0; ) {
    const r = tree.rec(c);
    if (r === undefined) return false;
    if (r.attrs.ref === ref) return true;
    if (r.tag === TAG.call && holdsRef(d, c, ref)) return true;
    c = r.next;
  }
  return false;
}

/** Marks every call still open as interrupted: the recording ends before its result. */
function settleOpenCalls(d: TreeDraft): void {
  for (const c of d.select(`call[status="${CALL.pending}"]`)) {
    d.set(c.id, ATTR.status, CALL.interrupted);
    d.set(c.id, ATTR.reason, "the recording ends before this call's result");
  }
}
