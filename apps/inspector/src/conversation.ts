/**
 * The conversation at an event (IN-26, IN-27): a window of `<body>`'s children — turns, stops,
 * whatever else a writer put there — taken from the end (or before a given child) through sibling
 * links, so an answer costs the window, not the session. Each is the tree's own JSON of the
 * element (`treeJson`, the tree view's window), read from the same materialized tree the tree
 * endpoint answers from: the page renders elements, not a second model of the session.
 *
 * What the tree does not say, the log does: the event that settled each call (its `by` is the
 * call, `byCall`), and whether that event changed workspace files (WS-22: a call's file changes
 * are ops of its settle event), so the page can show the call's file diff (`…/filediff` from the
 * event before it to the event). The settle events of a line of history are indexed once, from
 * the narrow event index, and extended as the line grows.
 */
import { byCall, LABEL, TAG, workspaceElement } from "@strata/agent";
import { type Element, mapIds, type NodeId, type Tree } from "@strata/dom";
import { bodyOf, decodeEvent } from "@strata/engine";
import type { AsyncStore, EventId, EventMeta, Store } from "@strata/store";
import { HttpError } from "./failure.ts";
import type { CallEffects, ConversationResponse, NodeJson } from "./protocol.ts";
import { treeJson, WINDOW } from "./tree-json.ts";

/** The labels of the events that settle a call (their `by` names it). */
const SETTLING: ReadonlySet<string> = new Set([LABEL.callOutcome, LABEL.callInterrupted]);
/** Lines of history indexed at most (a view follows one branch; a few more for other tabs and branches). */
const LINES = 8;
/** Events read per request while indexing a line. */
const SCAN_PAGE = 5000;
/** Settle events whose "changed files" answer is kept (events never change, so neither does it). */
const FILES_KEPT = 50_000;

interface Settle {
  readonly id: EventId;
  readonly prior: EventId | null;
  readonly depth: number;
  readonly label: string | null;
}

/** The settle events of one line of history, genesis to `tip`, by the `by` they carry. */
interface Line {
  tip: EventId;
  depth: number;
  readonly byCall: Map<string, Settle>;
}

/**
 * Settle events by call, per line of history, and whether each changed files. One per server;
 * requests are served one after another (the index they extend is shared).
 */
export class Settles {
  #lines: Line[] = [];
  readonly #files = new Map<EventId, boolean>();
  #queue: Promise<unknown> = Promise.resolve();
  constructor(private readonly store: Store | AsyncStore) {}

  /** The settle event of every call in `calls` that is settled at `at` on `at`'s line, and its file diff's ends. */
  effects(at: EventMeta, tree: Tree, calls: readonly NodeId[]): Promise<Record<string, CallEffects>> {
    const run = this.#queue.then(async () => {
      const line = await this.#lineTo(at);
      const out: Record<string, CallEffects> = {};
      for (const call of calls) {
        const s = line.byCall.get(byCall(call));
        if (s === undefined || s.depth > at.depth) continue;
        const settled = { id: s.id, depth: s.depth, label: s.label };
        out[String(call)] =
          s.prior !== null && (await this.#changesFiles(s.id, tree)) ? { settled, files: { from: s.prior, to: s.id } } : { settled };
      }
      return out;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** The indexed line through `at`: a known line that holds `at`, one extended to it, or a new one. */
  async #lineTo(at: EventMeta): Promise<Line> {
    for (const [i, line] of this.#lines.entries()) {
      const holds =
        line.depth >= at.depth
          ? line.depth === at.depth
            ? line.tip === at.id
            : (await this.store.chainMeta(line.tip, at.depth - 1, 1))[0]?.id === at.id
          : (await this.store.chainMeta(at.id, line.depth - 1, 1))[0]?.id === line.tip;
      if (!holds) continue;
      if (line.depth < at.depth) await this.#scan(line, at);
      this.#lines.splice(i, 1);
      this.#lines.push(line);
      return line;
    }
    const line: Line = { tip: at.id, depth: 0, byCall: new Map() };
    await this.#scan(line, at);
    this.#lines.push(line);
    if (this.#lines.length > LINES) this.#lines.shift();
    return line;
  }

  /** Extends `line` to `at` (whose chain holds the line's tip) with the settle events after its tip. */
  async #scan(line: Line, at: EventMeta): Promise<void> {
    let after = line.depth;
    while (after < at.depth) {
      const page = await this.store.chainMeta(at.id, after, Math.min(SCAN_PAGE, at.depth - after));
      const last = page[page.length - 1];
      if (last === undefined) break;
      for (const e of page)
        if (e.by !== null && e.label !== null && SETTLING.has(e.label))
          line.byCall.set(e.by, { id: e.id, prior: e.prior, depth: e.depth, label: e.label });
      after = last.depth;
    }
    line.tip = at.id;
    line.depth = at.depth;
  }

  /**
   * True when event `id` may have changed workspace files: one of its ops names the `<workspace>`
   * element, one of its `<file>`s, or an element `tree` (a later tree on the line) no longer has
   * (it may have been a file since deleted). The page asks `…/filediff` for the exact change.
   */
  async #changesFiles(id: EventId, tree: Tree): Promise<boolean> {
    const known = this.#files.get(id);
    if (known !== undefined) return known;
    const ws = workspaceElement(tree);
    let changes = false;
    if (ws !== undefined) {
      const e = await this.store.event(id);
      const d = e === undefined ? undefined : decodeEvent(e);
      if (d?.kind === "patch")
        for (const op of d.ops)
          mapIds(op, (n) => {
            const el = tree.get(n);
            if (el === undefined || el.id === ws.id || el.parent?.id === ws.id) changes = true;
            return n;
          });
    }
    if (this.#files.size >= FILES_KEPT) this.#files.clear();
    this.#files.set(id, changes);
    return changes;
  }
}

/** Ids of the `<call>` elements in the shown part of `n`. */
function callsIn(n: NodeJson, out: NodeId[]): void {
  if (n.tag === TAG.call) out.push(n.id);
  for (const c of n.children ?? []) if (!("elided" in c)) callsIn(c, out);
}

/**
 * `…/conversation`: the last `limit` children of `<body>` in `tree` (the tree at `at`), or the
 * last `limit` before child `before`, windowed (the newest first, so a spent element budget cuts
 * the oldest), with their calls' effects.
 */
export async function conversation(
  settles: Settles,
  tree: Tree,
  at: EventMeta,
  before: NodeId | undefined,
  limit: number,
): Promise<ConversationResponse> {
  const body = bodyOf(tree);
  let c: Element | null = body.lastChild;
  if (before !== undefined) {
    const b = tree.get(before);
    if (b === undefined || b.parent?.id !== body.id)
      throw new HttpError(400, `element ${before} is not a child of <body> at event ${at.id} (?before= takes an item's id)`);
    c = b.prevSibling;
  }
  const budget = { left: WINDOW.maxElements };
  const items: NodeJson[] = [];
  for (; c !== null && items.length < limit; c = c.prevSibling) items.push(treeJson(c, WINDOW, budget));
  items.reverse();
  const calls: NodeId[] = [];
  for (const n of items) callsIn(n, calls);
  return { event: at.id, body: body.id, items, earlier: c !== null, calls: await settles.effects(at, tree, calls) };
}
