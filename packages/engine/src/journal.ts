/**
 * The write path of one line of history (L2, EN-12 … EN-15): validate the whole patch against the
 * live tree, append it durably with the expected head (compare-and-swap), then make the already
 * computed result the live tree — the same `foldEvent` replay uses — and write a snapshot every K
 * events of the chain. A commit that fails changes nothing: not the log, not the head, not the tree.
 */
import { type NodeSpec, type Op, specSize, type Tree } from "@strata/dom";
import type { EventId, EventMeta, SessionId, SessionInfo, Store } from "@strata/store";
import { EngineError } from "./errors.ts";
import { DEFAULT_SKELETON, decodeEvent, encodeGenesis, encodePatch, foldEvent, GENESIS_KIND, PATCH_KIND } from "./events.ts";
import { scanLifecycle, updateLifecycle } from "./lifecycle.ts";
import { materializeVersion } from "./materialize.ts";
import { SnapshotWriter } from "./snapshots.ts";
import { TextIndex } from "./texts.ts";

/** Default snapshot interval in events (docs/benchmarks.md, store section, has the measurements). */
export const DEFAULT_SNAPSHOT_EVERY = 128;

/**
 * Ids are minted in blocks of this size, each reserved from the session's counter by the line of
 * history that mints into it (EN-17): two branches written at the same time, even by two processes,
 * never mint the same id (L5). Block 0 (ids 1 … 4096) belongs to the session's first line.
 */
export const ID_BLOCK = 4096;

export interface JournalOptions {
  /** Write a snapshot when the chain has grown this many events past the last one (default 128). */
  readonly snapshotEvery?: number;
}

export interface CommitInput {
  readonly ops: readonly Op[];
  readonly label?: string | null;
  readonly by?: string | null;
  readonly ts?: number;
}

export class Journal {
  #tree: Tree;
  #head: EventMeta;
  #lastSnapshotDepth: number;
  readonly #texts: TextIndex;
  readonly #snapshots: SnapshotWriter;
  readonly #every: number;
  #live: Set<number>;
  /** Last id this line may mint before reserving another block; `undefined`: reserve at the next commit. */
  #blockEnd: number | undefined;

  private constructor(
    readonly store: Store,
    readonly session: SessionId,
    readonly branch: string,
    tree: Tree,
    head: EventMeta,
    lastSnapshotDepth: number,
    texts: TextIndex,
    options: JournalOptions,
    blockEnd: number | undefined,
    live: Set<number>,
  ) {
    this.#live = live;
    this.#blockEnd = blockEnd;
    this.#tree = tree;
    this.#head = head;
    this.#lastSnapshotDepth = lastSnapshotDepth;
    this.#texts = texts;
    this.#every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    this.#snapshots = new SnapshotWriter(store, texts);
  }

  /** Starts a session: writes its genesis event (the fixed skeleton) on branch "main". */
  static create(
    store: Store,
    input: { title?: string | null; metadata?: Record<string, unknown>; skeleton?: NodeSpec } = {},
    options: JournalOptions = {},
  ): { journal: Journal; session: SessionInfo } {
    const data = encodeGenesis(input.skeleton ?? DEFAULT_SKELETON);
    const { session, genesis } = store.createSession({
      title: input.title ?? null,
      metadata: input.metadata ?? {},
      genesis: { kind: GENESIS_KIND, label: "session.start", data },
    });
    const tree = foldEvent(undefined, decodeEvent(genesis), genesis.id);
    return {
      journal: new Journal(store, session.id, "main", tree, genesis, 0, new TextIndex(), options, ID_BLOCK, scanLifecycle(tree)),
      session,
    };
  }

  /** Opens a branch at its head: nearest snapshot plus the events after it. */
  static open(store: Store, session: SessionId, branch = "main", options: JournalOptions = {}): Journal {
    const b = store.branch(session, branch);
    if (b === undefined) throw new EngineError("not-found", `session ${session} has no branch "${branch}"`);
    const texts = new TextIndex();
    const { tree, live } = materializeVersion(store, b.head, { texts });
    const head = store.eventMeta(b.head) as EventMeta;
    const snap = store.nearestSnapshot(b.head);
    // A pinned branch (just forked or moved) starts a new line at its next append: it reserves a
    // block then. A line that owns its segment keeps minting in the block that holds its mark.
    const blockEnd = b.pinned ? undefined : Math.max(ID_BLOCK, Math.ceil(tree.hwm / ID_BLOCK) * ID_BLOCK);
    return new Journal(store, session, branch, tree, head, snap?.depth ?? 0, texts, options, blockEnd, live);
  }

  get tree(): Tree {
    return this.#tree;
  }

  get head(): EventMeta {
    return this.#head;
  }

  /** Ids of the live tree's lifecycle-bearing elements. */
  get live(): ReadonlySet<number> {
    return this.#live;
  }

  /** Appends one patch event. Throws (and changes nothing) if the patch does not apply or the head moved. */
  commit(input: CommitInput): EventMeta {
    return this.commitMany([input])[0] as EventMeta;
  }

  /** Appends several patch events in one transaction (group commit): all of them or none. */
  commitMany(inputs: readonly CommitInput[]): EventMeta[] {
    return this.commitWithOps(inputs).metas;
  }

  /**
   * Like {@link commitMany}, also returning the ops as stored. Unless `floored` (the caller already
   * put {@link idFloor}'s op in front), ids are kept disjoint from other lines by shifting.
   */
  commitWithOps(inputs: readonly CommitInput[], options: { floored?: boolean } = {}): { metas: EventMeta[]; patches: (readonly Op[])[] } {
    if (inputs.length === 0) return { metas: [], patches: [] };
    let patches: (readonly Op[])[] = inputs.map((i) => i.ops);
    if (!options.floored) {
      const floor = this.idFloor(patches);
      if (floor !== undefined) patches = withIdFloor(patches, this.#tree.hwm, floor);
    }
    // Validate first: fold every patch onto the live tree; nothing is written if any fails.
    const trees: Tree[] = [];
    let tree = this.#tree;
    for (const ops of patches) {
      tree = foldEvent(tree, { kind: "patch", ops }, this.#head.id + trees.length + 1);
      trees.push(tree);
    }
    const metas = this.store.append(
      this.session,
      this.branch,
      this.#head.id,
      inputs.map((i, k) => ({
        kind: PATCH_KIND,
        label: i.label ?? null,
        by: i.by ?? null,
        ts: i.ts,
        data: encodePatch(patches[k] as readonly Op[]),
      })),
    );
    // Durable: the computed trees become the live state.
    let before = this.#tree;
    for (let i = 0; i < patches.length; i++) {
      this.#texts.recordPatch((metas[i] as EventMeta).id, before, patches[i] as readonly Op[]);
      this.#live = updateLifecycle(this.#live, trees[i] as Tree, before.hwm, patches[i] as readonly Op[]);
      before = trees[i] as Tree;
    }
    this.#tree = tree;
    this.#head = metas[metas.length - 1] as EventMeta;
    if (this.#pendingBlockEnd !== undefined) {
      this.#blockEnd = this.#pendingBlockEnd;
      this.#pendingBlockEnd = undefined;
    }
    if (this.#head.depth - this.#lastSnapshotDepth >= this.#every) this.snapshot();
    return { metas, patches };
  }

  #pendingBlockEnd: number | undefined;

  /**
   * The id floor these patches need (EN-17), or undefined: if they would mint past this line's
   * block (or the line has none yet, after a fork or rewind), reserves fresh blocks from the
   * session's counter and returns the first id of the first one. The caller puts
   * `["set", 0, "hwm", floor]` in front of the patches, before minting anything.
   */
  idFloor(patches: readonly (readonly Op[])[]): number | undefined {
    let hwm = this.#tree.hwm;
    let minted = 0;
    for (const ops of patches)
      for (const op of ops) {
        if (op[0] === "ins" && op[3].id === undefined) {
          const n = specSize(op[3]);
          hwm += n;
          minted += n;
        } else if (op[0] === "set" && op[1] === 0) hwm = Math.max(hwm, Number(op[3]));
      }
    // A new line (after a fork or rewind) reserves at its first commit, minting or not, so a line
    // that owns its segment always mints in a block it reserved (see `open`).
    if (this.#blockEnd !== undefined && hwm <= this.#blockEnd) return undefined;
    const blocks = Math.max(1, Math.ceil(minted / ID_BLOCK));
    const first = this.store.reserve(this.session, blocks);
    this.#pendingBlockEnd = (first + blocks) * ID_BLOCK;
    return first * ID_BLOCK;
  }

  /** Writes a snapshot of the head now. */
  snapshot(): { pages: number; written: number } {
    const r = this.#snapshots.write(this.#head.id as EventId, this.#tree, this.#live);
    this.#lastSnapshotDepth = this.#head.depth;
    this.#texts.maybePrune(this.#tree);
    return r;
  }
}

/**
 * Puts `["set", 0, "hwm", floor]` in front of `patches` and moves every reference to an id minted
 * inside them (anything above `hwmBefore`: journaled patches cannot name other new ids) up by the
 * same amount, so literal ops keep pointing at the elements they insert.
 */
export function withIdFloor(patches: readonly (readonly Op[])[], hwmBefore: number, floor: number): (readonly Op[])[] {
  const moved = patches.map((ops) => shiftMinted(ops, hwmBefore, floor - hwmBefore));
  return moved.map((ops, i) => (i === 0 ? [["set", 0, "hwm", String(floor)] as Op, ...ops] : ops));
}

/** `ops` with every id above `hwmBefore` (an id the same patch mints) moved up by `delta`. */
export function shiftMinted(ops: readonly Op[], hwmBefore: number, delta: number): Op[] {
  const shift = <T extends number | null>(id: T): T => (id !== null && id > hwmBefore ? ((id + delta) as T) : id);
  return ops.map((op): Op => {
    switch (op[0]) {
      case "ins":
        return ["ins", shift(op[1]), shift(op[2]), op[3]];
      case "mv":
        return ["mv", shift(op[1]), shift(op[2]), shift(op[3])];
      case "set":
        return op[1] === 0 ? op : ["set", shift(op[1]), op[2], op[3]];
      case "rm":
        return ["rm", shift(op[1])];
      case "text":
        return ["text", shift(op[1]), op[2]];
      default:
        return ["append", shift(op[1]), op[2]];
    }
  });
}
