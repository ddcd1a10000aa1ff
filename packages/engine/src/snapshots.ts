/**
 * Paged snapshots (EN-8 … EN-11, decision 0006). A snapshot is a header plus one content-addressed
 * blob per page of 256 ids. Pages that did not change since the last snapshot keep their address
 * (nothing is written for them); a tree materialized from a snapshot loads a page only when an op
 * or a read touches it. Long texts inside pages are references into the log (texts.ts).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import {
  decodePage,
  encodePage,
  LazyPage,
  lazyTree,
  type Page,
  pageCache,
  RECORD_TEXT,
  slotsOf,
  type Tree,
  type TreeHeader,
  withStoredPages,
} from "@strata/dom";
import {
  type AsyncStore,
  drive,
  type EventId,
  isAsyncStore,
  type SnapshotRecord,
  type Store,
  sha256,
  textRefs,
  value,
} from "@strata/store";
import { EngineError } from "./errors.ts";
import { NotLoaded, settle } from "./loading.ts";
import { type BlobSink, type TextIndex, type TextRef, TextResolver } from "./texts.ts";

/** Where a loaded tree reads its pages from when they are first touched. */
export type PageSource = Pick<Store, "getBlob">;

export const SNAPSHOT_HEADER_FORMAT = "strata-snapshot@1";

/** Pages larger than this are stored deflated. */
const COMPRESS_FROM = 1024;
const PLAIN = 0x6a; // "j"
const DEFLATED = 0x7a; // "z"

interface Header {
  readonly format: string;
  readonly tree: TreeHeader;
  /** Ids of the lifecycle-bearing elements of this version (lifecycle.ts). */
  readonly live?: readonly number[];
}

/** Pages at the end of a live tree a writer keeps loaded after a snapshot (where appends land). */
const HOT_PAGES = 2;

/** Writes snapshots of one live line of history, reusing the addresses of unchanged pages. */
export class SnapshotWriter {
  readonly #addresses = new WeakMap<Page, string>();
  readonly #resolver: TextResolver;

  constructor(
    private readonly store: Store | AsyncStore,
    private readonly texts: TextIndex,
  ) {
    this.#resolver = new TextResolver(store);
  }

  /**
   * `tree` (just written by {@link write}) with the pages that snapshot stored, except the last
   * {@link HOT_PAGES}, replaced by evictable pages read back from the store when touched (EN-46),
   * once the tree has more than a quarter of `pageCache.limit` pages:
   * a live writer's memory stays bounded whatever the session's length. Their texts' sources are
   * forgotten here: a page read back carries its stored texts with it (DOM-43).
   */
  release(tree: Tree): Tree {
    // Over the asynchronous port a page cannot be read back on touch (a tree is read synchronously):
    // the writer keeps its tree whole.
    const store = this.store;
    if (isAsyncStore(store)) return tree;
    // A tree of at most a quarter of the page cache stays whole: nothing to bound, and no page
    // read back (a projection memo keyed by record stays warm).
    if (tree.pageCount <= pageCache.limit / 4) return tree;
    const keep = tree.pageCount - HOT_PAGES;
    return withStoredPages(
      tree,
      (i, slot) => {
        if (i >= keep) return undefined;
        const address = slot instanceof LazyPage ? slot.ref : this.#addresses.get(slot);
        if (address !== undefined) this.texts.forgetPage(i);
        return address;
      },
      (address, index) => loadPage(store, address, index, this.texts, this.#resolver),
    );
  }

  /** Stores the snapshot of `tree` (with its lifecycle set), the state after `event`. Returns how many pages were written. */
  write(event: EventId, tree: Tree, live: ReadonlySet<number>): { pages: number; written: number } {
    return drive(this.writeSteps(event, tree, live)) as { pages: number; written: number };
  }

  /**
   * {@link write} as steps (steps.ts). Over the asynchronous port the pages and texts are encoded
   * first, their blobs addressed here (sha256, as every store addresses them) and written after.
   */
  *writeSteps(event: EventId, tree: Tree, live: ReadonlySet<number>): Generator<unknown, { pages: number; written: number }, unknown> {
    const store = this.store;
    const buffered = isAsyncStore(store) ? new BlobBuffer() : undefined;
    const sink: BlobSink = buffered ?? (store as Store);
    let written = 0;
    const refs: (string | null)[] = [];
    for (const slot of slotsOf(tree)) {
      if (slot === undefined) refs.push(null);
      else if (slot instanceof LazyPage)
        refs.push(slot.ref); // unchanged since it was loaded
      else {
        const known = this.#addresses.get(slot);
        if (known !== undefined) refs.push(known);
        else {
          // Records read from this store's pages keep their stored texts (DOM-43): not read, not
          // stored again. Over the asynchronous port a text the encoding reads is fetched first.
          const json = yield* settle(() =>
            encodePage(slot, { encodeText: (text, id) => this.texts.encode(text, id, sink), reuseStored: isFlatRef }),
          );
          const address = sink.putBlob(frame(json));
          this.#addresses.set(slot, address);
          written++;
          refs.push(address);
        }
      }
    }
    if (buffered !== undefined) yield* buffered.flush(store);
    const header: Header = {
      format: SNAPSHOT_HEADER_FORMAT,
      tree: { hwm: tree.hwm, root: tree.rootId, fixed: tree.fixed, size: tree.size },
      live: [...live].sort((a, b) => a - b),
    };
    yield* value(store.putSnapshot(event, JSON.stringify(header), refs));
    return { pages: refs.length, written };
  }
}

/** Blobs addressed now and written to the store later, in order, each once. */
class BlobBuffer implements BlobSink {
  readonly #pending = new Map<string, Uint8Array | string>();

  putBlob(data: Uint8Array | string): string {
    const address = sha256(data).toString("hex");
    this.#pending.set(address, data);
    return address;
  }

  *flush(store: Store | AsyncStore): Generator<unknown, void, unknown> {
    for (const [address, data] of this.#pending) {
      const stored = yield* value(store.putBlob(data));
      if (stored !== address)
        throw new EngineError(
          "corrupt",
          `the store addressed a blob ${stored}, not its sha256 ${address}: blobs must be content-addressed`,
        );
    }
    this.#pending.clear();
  }
}

/**
 * A stored text reference a snapshot may write again as it is (DOM-43): one reference, or one
 * concatenation of references and strings. A nested concatenation (which strata never writes, but
 * a damaged or hostile page may hold) is flattened through the text index instead (EN-11).
 */
function isFlatRef(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  if (value[0] !== "c") return true;
  const parts = value[1];
  return Array.isArray(parts) && parts.every((p) => typeof p === "string" || (Array.isArray(p) && p[0] !== "c"));
}

/** Stored page bytes: a marker byte, then JSON (plain or raw-deflated). */
function frame(json: string): Buffer {
  const plain = Buffer.from(json, "utf8");
  if (plain.length < COMPRESS_FROM) return Buffer.concat([Buffer.of(PLAIN), plain]);
  return Buffer.concat([Buffer.of(DEFLATED), deflateRawSync(plain, { level: 1 })]);
}

/**
 * The blob hashes a stored blob's bytes name, for `store.collectGarbage({ refs })` (ST-36): every
 * 64-hex run of its text and, when it may be a deflated page, of the page's JSON. Conservative:
 * a blob that only looks like a page is read both ways.
 */
export function storedBlobRefs(bytes: Buffer): string[] {
  const out = textRefs(bytes);
  if (bytes[0] === DEFLATED) {
    let json: Buffer | undefined;
    try {
      json = inflateRawSync(bytes.subarray(1), { maxOutputLength: 2 ** 30 });
    } catch (e) {
      // Not deflate data: not a page, its text is all it names. A page too large to read here
      // must stop the collection rather than let it miss what the page names.
      if ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
        throw new EngineError("bad-snapshot", "a deflated snapshot page is larger than 1 GiB: the collection stops and deletes nothing");
    }
    if (json !== undefined) out.push(...textRefs(json));
  }
  return out;
}

function unframe(bytes: Buffer, address: string): string {
  if (bytes[0] === PLAIN) return bytes.subarray(1).toString("utf8");
  if (bytes[0] === DEFLATED) return inflateRawSync(bytes.subarray(1)).toString("utf8");
  throw new EngineError("bad-snapshot", `page ${address} has an unknown format marker ${bytes[0]}`);
}

/**
 * The tree stored by `record`, with pages loaded on first touch. Texts read from pages are
 * registered in `texts` so the next snapshot can keep referring to their sources.
 */
export function loadSnapshot(store: Store, record: SnapshotRecord, texts: TextIndex, resolver = new TextResolver(store)): Tree {
  return loadSnapshotVersion(store, record, texts, resolver).tree;
}

/**
 * {@link loadSnapshotVersion} on either port, as steps (steps.ts). Over the asynchronous port
 * (decision 0037) the tree's pages and texts are fetched when a read first reaches them, through
 * `NotLoaded` and {@link settle} (loading.ts): the engine's operations load what they touch, and
 * {@link loadTreeSteps} loads a whole tree in one call for its pages and one per level of texts.
 * Page 0 and the last pages (what a head's tail and the next commits touch) are fetched here, in one call.
 */
export function* loadSnapshotSteps(
  store: Store | AsyncStore,
  record: SnapshotRecord,
  texts: TextIndex,
  resolver: TextResolver,
): Generator<unknown, { tree: Tree; live: Set<number> | undefined }, unknown> {
  if (!isAsyncStore(store)) return loadSnapshotVersion(store, record, texts, resolver);
  const source = new AsyncPages(store, record, texts, resolver);
  const version = loadSnapshotVersion(source, record, texts, resolver, (address, index) => source.load(address, index));
  // Page 0 holds the skeleton (a turn appended under the body changes the body's record) and the
  // last pages hold the newest elements: what a tail and the next commits touch, in one call.
  const stored = record.pages.filter((p): p is string => p !== null);
  const hot = new Set(stored.slice(-HOT_PAGES));
  if (record.pages[0] !== null && record.pages[0] !== undefined) hot.add(record.pages[0]);
  if (hot.size > 0) yield* source.fetch([...hot], false);
  for (const [, slot] of version.tree.slotEntries()) if (slot instanceof LazyPage) SOURCES.set(slot, source);
  return version;
}

/**
 * Loads every page and text of `tree` and answers it (decision 0037): a tree from `at`, `materialize`
 * or `Session.tree` over the asynchronous port reads only what was fetched. With `texts: false`,
 * only the pages: the structure, tags and attributes read whole, each text still fetched when
 * first read. Over the synchronous port it reads them from the store at once.
 */
export function loadTree(tree: Tree, options: { readonly texts?: boolean } = {}): Promise<Tree> {
  try {
    return Promise.resolve(drive(loadTreeSteps(tree, options)));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The source of each page of a tree loaded over the asynchronous port (for {@link loadTreeSteps}). */
const SOURCES = new WeakMap<LazyPage, AsyncPages>();

/**
 * The pages of one snapshot over the asynchronous port (decision 0037): a page read before it was
 * fetched throws `NotLoaded`, whose steps fetch it. A page's bytes are dropped once it is decoded
 * (the tree keeps the page: pages over this port are never evicted).
 */
class AsyncPages implements PageSource {
  readonly #bytes = new Map<string, Buffer>();
  /** Pages fetched with their texts: their records, parsed for the references, decoded from these. */
  readonly #records = new Map<string, unknown[]>();
  /** Fetched and not found: reading them is `bad-snapshot`. */
  readonly #absent = new Set<string>();
  readonly #index = new Map<string, number>();

  constructor(
    private readonly store: AsyncStore,
    record: SnapshotRecord,
    private readonly texts: TextIndex,
    private readonly resolver: TextResolver,
  ) {
    record.pages.forEach((p, i) => {
      if (p !== null) this.#index.set(p, i);
    });
  }

  getBlob(address: string): Buffer | undefined {
    const b = this.#bytes.get(address);
    if (b !== undefined || this.#absent.has(address)) return b;
    throw new NotLoaded(`page ${this.#index.get(address) ?? "?"} of this tree`, () => this.fetch([address], false));
  }

  /** The tree's loader: page `index`, stored at `address`, decoded from what was fetched. */
  load(address: string, index: number): Page {
    const records = this.#records.get(address);
    const page =
      records === undefined
        ? loadPage(this, address, index, this.texts, this.resolver)
        : decodeRecords(records, index, this.texts, this.resolver);
    this.#records.delete(address);
    this.#bytes.delete(address);
    return page;
  }

  /**
   * Fetches the pages at `addresses` not fetched yet, in one call; `withTexts`: then the texts
   * they refer to (one call per level of text groups), each page parsed once for both.
   */
  *fetch(addresses: readonly string[], withTexts: boolean): Generator<unknown, void, unknown> {
    const wanted = addresses.filter((a) => !this.#bytes.has(a) && !this.#records.has(a) && !this.#absent.has(a));
    if (wanted.length > 0) {
      const got = yield* value(this.store.getBlobs(wanted));
      for (const a of wanted) {
        const b = got.get(a);
        if (b === undefined) this.#absent.add(a);
        else this.#bytes.set(a, b);
      }
    }
    if (!withTexts) return;
    const refs: unknown[] = [];
    for (const a of addresses) {
      const bytes = this.#bytes.get(a);
      let records = this.#records.get(a);
      if (records === undefined && bytes !== undefined) {
        try {
          records = readRecords(bytes, a, this.#index.get(a) ?? -1);
        } catch {
          continue; // decoding the page reports it, when it is read
        }
        this.#records.set(a, records);
        this.#bytes.delete(a);
      }
      if (records !== undefined)
        for (const r of records) if (Array.isArray(r) && r.length === 9 && typeof r[RECORD_TEXT] !== "string") refs.push(r[RECORD_TEXT]);
    }
    if (refs.length > 0) yield* this.resolver.fetch(refs);
  }
}

/**
 * Loads every page and text of `tree` (a tree read over the asynchronous port reads only what was
 * fetched, decision 0037): one call for the pages not loaded yet and one per level of text groups,
 * then a round per page loaded earlier whose texts were not read. Over the synchronous port it
 * reads them all from the store. Answers the same tree, now readable whole.
 */
export function* loadTreeSteps(tree: Tree, options: { readonly texts?: boolean } = {}): Generator<unknown, Tree, unknown> {
  const texts = options.texts !== false;
  const bySource = new Map<AsyncPages, string[]>();
  for (const [, slot] of tree.slotEntries()) {
    if (!(slot instanceof LazyPage) || slot.loaded) continue;
    const source = SOURCES.get(slot);
    if (source === undefined) continue;
    const list = bySource.get(source);
    if (list === undefined) bySource.set(source, [slot.ref]);
    else list.push(slot.ref);
  }
  for (const [source, addresses] of bySource) yield* source.fetch(addresses, texts);
  yield* settle(() => {
    for (const [, slot] of tree.slotEntries()) {
      const page = slot instanceof LazyPage ? slot.page : slot;
      if (texts && page !== undefined) for (const r of page) if (r !== undefined) void r.text;
    }
  });
  return tree;
}

/** Like {@link loadSnapshot}, with the lifecycle set the writer stored (undefined if it stored none). */
export function loadSnapshotVersion(
  store: PageSource,
  record: SnapshotRecord,
  texts: TextIndex,
  resolver = new TextResolver(store as Store),
  load: (address: string, index: number) => Page = (address, index) => loadPage(store, address, index, texts, resolver),
): { tree: Tree; live: Set<number> | undefined } {
  let header: Header;
  try {
    header = JSON.parse(record.header) as Header;
  } catch {
    throw new EngineError("bad-snapshot", `the snapshot at event ${record.event} has an unreadable header`);
  }
  if (header?.format !== SNAPSHOT_HEADER_FORMAT)
    throw new EngineError(
      "bad-snapshot",
      `the snapshot at event ${record.event} has format ${JSON.stringify(header?.format)}, not ${SNAPSHOT_HEADER_FORMAT}`,
    );
  // Not evictable: a reader keeps what it loads (a full read walks the pages twice: index, then
  // select). A live writer makes them evictable at its next snapshot (SnapshotWriter.release).
  const tree = lazyTree(header.tree, record.pages, load);
  return { tree, live: Array.isArray(header.live) ? new Set(header.live) : undefined };
}

/**
 * Reads and decodes one page. Its text references are resolved when a text is first read
 * (DOM-42, EN-45): a fork, `at(event)` or an append that touches a page for its structure fetches
 * none of its texts; the first text read on a page fetches all of that page's in one batch.
 */
export function loadPage(store: PageSource, address: string, index: number, texts: TextIndex, resolver: TextResolver): Page {
  const bytes = store.getBlob(address);
  if (bytes === undefined) throw new EngineError("bad-snapshot", `page ${index} (${address}) is missing from the store`);
  return decodeRecords(readRecords(bytes, address, index), index, texts, resolver);
}

/** The records of a stored page (its frame opened, its JSON parsed); `bad-snapshot` when they cannot be read. */
function readRecords(bytes: Buffer, address: string, index: number): unknown[] {
  let records: unknown;
  try {
    records = JSON.parse(unframe(bytes, address));
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new EngineError("bad-snapshot", `page ${index} (${address}) is not readable: ${(e as Error).message}`);
  }
  if (!Array.isArray(records)) throw new EngineError("bad-snapshot", `page ${index} (${address}) is not a list of records`);
  return records;
}

/** A page from its records, its texts decoded through `resolver` when first read. */
function decodeRecords(records: unknown[], index: number, texts: TextIndex, resolver: TextResolver): Page {
  return decodePage(index, records, {
    deferTexts: true,
    prepareTexts: (refs) => {
      try {
        resolver.prefetch(refs);
      } catch (e) {
        // Fetching ahead is an optimisation: what is not fetched yet is (NotLoaded, and the page is
        // prepared again on its next read); damage is reported by the text that reads it.
        if (e instanceof NotLoaded) throw e;
      }
    },
    decodeText: (value, id) => {
      const text = resolver.text(value);
      texts.recordLoaded(id, text, value as TextRef);
      return text;
    },
  });
}
