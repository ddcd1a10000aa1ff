/**
 * `export` and `import` (CLI-23): a self-contained bundle of a session — its events, its
 * branches, every blob its events reference, and each exported head as readable XML — that
 * imports with its history intact (same events, same branches, same trees) and is verified on
 * import: every branch head is replayed from genesis and compared byte for byte with the XML the
 * bundle carries. The import is one transaction: a bundle that fails anywhere leaves the database
 * exactly as it was.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Tree, toXml } from "@strata/dom";
import { ID_BLOCK, materialize, replayVerify } from "@strata/engine";
import type { BranchInfo, EventId, EventInput, SessionId, Store, StoredEvent } from "@strata/store";
import { findSession } from "../address.ts";
import type { Command } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";

export const BUNDLE_FORMAT = "strata-bundle@1";

interface BundleEvent {
  readonly id: number;
  readonly prior: number | null;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number;
  readonly data: string;
}

export interface Bundle {
  readonly format: typeof BUNDLE_FORMAT;
  readonly session: {
    readonly id: string;
    readonly title: string | null;
    readonly created: number;
    readonly metadata: Record<string, unknown>;
  };
  /** `pinned`: the branch's next append starts a new line of history (after a fork or rewind). */
  readonly branches: readonly { readonly name: string; readonly head: number; readonly origin: string; readonly pinned?: boolean }[];
  readonly events: readonly BundleEvent[];
  /** hash → base64 bytes. */
  readonly blobs: Readonly<Record<string, string>>;
  /** branch → canonical XML of its head (with ids), for reading and for verification. */
  readonly heads: Readonly<Record<string, string>>;
}

const HASH = /\b[0-9a-f]{64}\b/g;

/** Builds the bundle of `session` (all branches, or only `branch`). */
export function buildBundle(store: Store, session: SessionId, branch?: string, progress?: (s: string) => void): Bundle {
  const info = store.getSession(session);
  if (info === undefined) throw new CliError(`no session ${session}`);
  const all = store.branches(session);
  const branches = branch === undefined ? all : all.filter((b) => b.name === branch);
  if (branches.length === 0)
    throw new CliError(`session ${session} has no branch "${branch}"; branches: ${all.map((b) => b.name).join(", ")}`);
  const events = new Map<number, StoredEvent>();
  for (const b of branches) for (const e of store.chain(b.head, 0, Number.MAX_SAFE_INTEGER)) events.set(e.id, e);
  const blobs: Record<string, string> = {};
  const hashes = new Set<string>();
  for (const e of events.values()) for (const h of e.data.match(HASH) ?? []) hashes.add(h);
  for (const [h, bytes] of store.getBlobs([...hashes].filter((h) => store.hasBlob(h)))) blobs[h] = bytes.toString("base64");
  const heads: Record<string, string> = {};
  for (const [i, b] of branches.entries()) {
    progress?.(`export: materializing ${b.name} (${i + 1}/${branches.length})`);
    heads[b.name] = toXml(materialize(store, b.head));
  }
  return {
    format: BUNDLE_FORMAT,
    session: { id: info.id, title: info.title, created: info.created, metadata: { ...info.metadata } },
    branches: branches.map((b) => ({ name: b.name, head: b.head, origin: b.origin, pinned: b.pinned })),
    events: [...events.values()]
      .sort((a, b) => a.id - b.id)
      .map((e) => ({ id: e.id, prior: e.prior, kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data })),
    blobs,
    heads,
  };
}

function bad(where: string, what: string): never {
  throw new CliError(`${where} is not a strata bundle: ${what}; make one with \`strata export SESSION > FILE\``);
}

/** Checks a parsed bundle's shape (the events themselves are checked when they are replayed). */
export function checkBundle(value: unknown, where: string): Bundle {
  if (typeof value !== "object" || value === null) bad(where, "it is not a JSON object");
  const b = value as Partial<Bundle>;
  if (b.format !== BUNDLE_FORMAT) bad(where, `its format is ${JSON.stringify(b.format)}, expected "${BUNDLE_FORMAT}"`);
  if (typeof b.session !== "object" || b.session === null || typeof b.session.id !== "string") bad(where, "it has no session");
  if (!Array.isArray(b.events) || b.events.length === 0) bad(where, "it has no events");
  if (!Array.isArray(b.branches) || b.branches.length === 0) bad(where, "it has no branches");
  const ids = new Set<number>();
  for (const [i, e] of b.events.entries()) {
    if (typeof e !== "object" || e === null || !Number.isSafeInteger(e.id) || typeof e.kind !== "string" || typeof e.data !== "string")
      bad(where, `event ${i} is malformed`);
    if (e.prior !== null && !ids.has(e.prior)) bad(where, `event ${e.id} follows ${e.prior}, which is not before it in the bundle`);
    if (e.prior === null && i !== 0) bad(where, `event ${e.id} has no prior but is not the first`);
    ids.add(e.id);
  }
  for (const br of b.branches)
    if (typeof br?.name !== "string" || !ids.has(br.head))
      bad(where, `branch ${JSON.stringify(br?.name)} has a head that is not in the bundle`);
  if (typeof b.blobs !== "object" || b.blobs === null || typeof b.heads !== "object" || b.heads === null)
    bad(where, "it has no blobs or heads");
  return b as Bundle;
}

/**
 * Imports a bundle as a new session (events get new ids; branches, payloads and trees are the
 * same) and verifies every branch head against the bundle's XML, all in one transaction: a bundle
 * that fails anywhere leaves the database exactly as it was. Returns the new session.
 */
export function importBundle(
  store: Store,
  bundle: Bundle,
  progress?: (s: string) => void,
): { session: SessionId; branches: number; events: number; blobs: number } {
  return store.transaction(() => importInto(store, bundle, progress));
}

function importInto(
  store: Store,
  bundle: Bundle,
  progress?: (s: string) => void,
): { session: SessionId; branches: number; events: number; blobs: number } {
  const byId = new Map(bundle.events.map((e) => [e.id, e]));
  const input = (e: BundleEvent): EventInput => ({ kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data });
  const genesis = bundle.events[0] as BundleEvent;
  for (const [hash, b64] of Object.entries(bundle.blobs)) {
    const stored = store.putBlob(Buffer.from(b64, "base64"));
    if (stored !== hash) throw new CliError(`the bundle's blob ${hash.slice(0, 16)}… does not match its content; the file is damaged`);
  }
  const { session, genesis: g } = store.createSession({
    title: bundle.session.title,
    metadata: { ...bundle.session.metadata, importedFrom: bundle.session.id },
    genesis: input(genesis),
  });
  const mapped = new Map<number, EventId>([[genesis.id, g.id]]);
  // main first (it exists already), then the others in the order their heads were written
  const order = [...bundle.branches].sort((a, b) => (a.name === "main" ? -1 : b.name === "main" ? 1 : a.head - b.head));
  let done = 0;
  for (const br of order) {
    const chain: BundleEvent[] = [];
    for (
      let e: BundleEvent | undefined = byId.get(br.head);
      e !== undefined && !mapped.has(e.id);
      e = e.prior === null ? undefined : byId.get(e.prior)
    )
      chain.push(e);
    chain.reverse();
    const base = chain.length === 0 ? (mapped.get(br.head) as EventId) : (mapped.get(chain[0]?.prior as number) as EventId);
    if (base === undefined) throw new CliError(`branch ${br.name} of the bundle does not reach its genesis`);
    let info: BranchInfo;
    if (br.name === "main") {
      info = store.branch(session.id, "main") as BranchInfo;
      if (info.head !== base) info = store.moveHead(session.id, "main", base).branch;
    } else info = store.fork(session.id, base, br.name);
    if (chain.length > 0) {
      const metas = store.append(session.id, br.name, info.head, chain.map(input));
      for (const [i, e] of chain.entries()) mapped.set(e.id, (metas[i] as { id: EventId }).id);
    }
    done += chain.length;
    progress?.(`import: ${done}/${bundle.events.length} events`);
  }
  // Ids minted on any imported line must never be minted again here (L5): the counter moves past
  // every imported id, and every branch starts a new line at its next append, so the journal
  // takes a fresh range for it instead of continuing where the imported line stopped.
  const heads = new Map(bundle.branches.map((br) => [br.name, materialize(store, mapped.get(br.head) as EventId)]));
  const hwm = Math.max(0, ...[...heads.values()].map((t) => t.hwm));
  store.reserve(session.id, Math.ceil((hwm + 1) / ID_BLOCK) + 1);
  for (const br of bundle.branches) store.moveHead(session.id, br.name, mapped.get(br.head) as EventId, { pin: true });
  for (const br of bundle.branches) {
    progress?.(`import: verifying ${br.name}`);
    if (toXml(heads.get(br.name) as Tree) !== bundle.heads[br.name])
      throw new CliError(
        `import check failed: branch ${br.name} replays to a different tree than the bundle's XML; the bundle is damaged (nothing was imported)`,
      );
    const r = replayVerify(store, session.id, { branch: br.name });
    if (!r.ok) throw new CliError(`import check failed on ${br.name}: ${r.mismatch?.reason ?? "replay mismatch"} (nothing was imported)`);
  }
  return { session: session.id, branches: bundle.branches.length, events: bundle.events.length, blobs: Object.keys(bundle.blobs).length };
}

export const exportCmd: Command = {
  name: "export",
  summary: "write a session as a self-contained bundle on stdout",
  usage: "strata export SESSION [--branch B] > FILE",
  description:
    "The bundle is one JSON document: events, branches, the blobs they reference, and each head as readable XML. `strata import FILE` brings it back, history intact, and verifies it.",
  examples: ["strata export 01JD4 > session.strata.json", "strata export 01JD4 --branch try-2 > try-2.json"],
  options: {},
  positionals: { min: 1, max: 1 },
  json: false,
  run(ctx, args) {
    const store = ctx.store();
    const s = findSession(store, args.positionals[0] as string);
    const bundle = buildBundle(store, s.id, ctx.branch, (m) => ctx.out.progress(m));
    ctx.out.progressDone();
    ctx.out.write(`${JSON.stringify(bundle)}\n`);
    ctx.out.note(
      `exported ${s.id}: ${bundle.branches.length} branches, ${bundle.events.length} events, ${Object.keys(bundle.blobs).length} blobs`,
    );
    return 0;
  },
};

export const importCmd: Command = {
  name: "import",
  summary: "bring a bundle in as a new session and verify it",
  usage: "strata import FILE",
  description:
    "Creates a new session with the bundle's events and branches (event ids are new; the original session id is kept in the metadata as importedFrom), then replays every branch head and compares it with the bundle's XML.",
  examples: ["strata import session.strata.json", "strata import session.strata.json --db other.db --json"],
  options: {},
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const path = resolve(ctx.cwd, args.positionals[0] as string);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new CliError(`${path} is not a strata bundle: it is not JSON (${(e as Error).message})`);
    }
    const bundle = checkBundle(value, path);
    const store = ctx.store({ create: true });
    const r = importBundle(store, bundle, (m) => ctx.out.progress(m));
    ctx.out.progressDone();
    if (ctx.out.json) ctx.out.data({ ...r, from: bundle.session.id, verified: true });
    else
      ctx.out.line(
        `${ctx.out.paint("green", "imported")} ${ctx.out.paint("cyan", r.session)} (from ${bundle.session.id}): ${r.branches} branches, ${r.events} events, ${r.blobs} blobs — every head verified`,
      );
    return 0;
  },
};
