/**
 * What the engine adds to `store.verify` (EN-16): every event decodes as a known kind, and every
 * snapshot equals the replay of its chain — checked incrementally: the replay starts from the
 * previous snapshot on the chain (itself verified, since snapshots are checked in event order) or
 * from genesis, and only pages whose addresses differ are compared record by record. A snapshot's
 * lifecycle set (its header's `live`, what a resume spawns from) must equal the replay's too.
 * Every blob the session refers to (EN-33) must be in the file: those inserted by any event, and
 * those named by every branch head's tree. Problems are reported, never thrown. Everything runs inside the one read transaction of
 * `verifyStore`, so the hooks see the same state as the store's own checks.
 */
import { attrsWritten, encodePage, LazyPage, type Page } from "@strata/dom";
import type { EventMeta, SessionId, SnapshotRecord, Store, VerifyFinding, VerifyHooks, VerifyReport } from "@strata/store";
import { isBlobRef, treeBlobRefs } from "./blob-refs.ts";
import { decodeEvent } from "./events.ts";
import { scanLifecycle } from "./lifecycle.ts";
import { materializeVersion } from "./materialize.ts";
import { loadSnapshotVersion } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";

/** The hooks that let `store.verify` judge payloads and snapshots. */
export function verifyHooks(store: Store, progress?: (done: number, total: number) => void): VerifyHooks {
  const check = (f: () => string | undefined, failed = (m: string) => m): string | undefined => {
    try {
      return f();
    } catch (e) {
      return failed((e as Error)?.message ?? String(e));
    }
  };
  // Snapshots found to differ are not used as the starting point of the next one's replay (one
  // that could not be checked, e.g. for an unreadable event before it, still is).
  const bad = new Set<number>();
  return {
    checkEvent: (event) =>
      check(() => {
        const decoded = decodeEvent(event);
        if (decoded.kind !== "patch") return undefined;
        const missing: string[] = [];
        // Inserted elements (the op carries their tag) whose attributes name a blob (EN-33).
        for (const op of decoded.ops)
          attrsWritten(
            op,
            (tag, attr, value) => void (tag !== undefined && isBlobRef(tag, attr, value) && !store.hasBlob(value) && missing.push(value)),
          );
        return missing.length === 0
          ? undefined
          : `it inserts elements that refer to blob${missing.length > 1 ? "s" : ""} ${missing.map((h) => h.slice(0, 12)).join(", ")}, which the file does not hold`;
      }),
    checkSnapshot: (snapshot) => {
      let differs = false;
      const problem = check(
        () => {
          const reason = compareSnapshot(store, snapshot, bad);
          differs = reason !== undefined;
          return reason;
        },
        (m) => `it cannot be checked against the replay of its chain: ${m}`,
      );
      if (differs) bad.add(snapshot.event);
      return problem;
    },
    progress,
  };
}

/**
 * `store.verify` with the engine's checks, all in one read transaction (ST-17): the store's walk,
 * every replay the hooks run and the fallback payload pass read one committed state, so a writer
 * committing meanwhile never shows up as a snapshot that "does not match its chain".
 */
export function verifyStore(store: Store, session?: SessionId, progress?: (done: number, total: number) => void): VerifyReport {
  return store.readTransaction(() => verifyConsistent(store, session, progress));
}

function verifyConsistent(store: Store, session: SessionId | undefined, progress?: (done: number, total: number) => void): VerifyReport {
  const report = verifyWithHooks(store, session, progress);
  const missing = missingHeadBlobs(store, session);
  return missing.length === 0 ? report : { ...report, ok: false, findings: [...report.findings, ...missing] };
}

/**
 * Blobs named by a branch head's tree (EN-33) that the file does not hold: what `prompt`, a
 * resume or an export of that branch would fail on. A head the store cannot materialize is
 * skipped here (the chain checks report it).
 */
function missingHeadBlobs(store: Store, only: SessionId | undefined): VerifyFinding[] {
  const out: VerifyFinding[] = [];
  const reported = new Set<string>();
  for (const s of only === undefined ? store.listSessions() : [{ id: only }]) {
    let branches: ReturnType<Store["branches"]>;
    try {
      branches = store.branches(s.id);
    } catch {
      continue;
    }
    for (const b of branches) {
      let refs: Set<string>;
      try {
        refs = treeBlobRefs(materializeVersion(store, b.head).tree);
      } catch {
        continue;
      }
      for (const hash of refs)
        if (!store.hasBlob(hash) && !reported.has(`${s.id}:${hash}`)) {
          reported.add(`${s.id}:${hash}`);
          out.push({
            code: "missing-blob",
            session: s.id,
            event: b.head,
            message: `branch "${b.name}" refers to blob ${hash} (in its tree at its head), which the file does not hold`,
          });
        }
    }
  }
  return out;
}

function verifyWithHooks(store: Store, session: SessionId | undefined, progress?: (done: number, total: number) => void): VerifyReport {
  const hooks = verifyHooks(store, progress);
  try {
    return store.verify(session, hooks);
  } catch (e) {
    // The store could not run the payload checks (e.g. an event whose payload blob is gone):
    // report what it finds without them, and check every payload the chains reach one by one.
    const report = store.verify(session, { ...hooks, checkEvent: undefined });
    const findings: VerifyFinding[] = [...report.findings, ...checkPayloads(store, session)];
    if (findings.length === report.findings.length)
      findings.push({
        code: "bad-event",
        session,
        message: `verify could not check event payloads: ${(e as Error)?.message ?? String(e)}`,
      });
    return { ...report, ok: false, findings };
  }
}

/**
 * Payload checks event by event over every branch's chain, reading each payload on its own. A
 * branch or chain the store cannot read is skipped here: the store's own checks report it.
 */
function checkPayloads(store: Store, only: SessionId | undefined): VerifyFinding[] {
  const out: VerifyFinding[] = [];
  const seen = new Set<number>();
  const chains = (id: SessionId): EventMeta[][] => {
    try {
      return store.branches(id).map((b) => store.chainMeta(b.head));
    } catch {
      return [];
    }
  };
  for (const s of only === undefined ? store.listSessions() : [{ id: only }])
    for (const chain of chains(s.id))
      for (const m of chain) {
        if (seen.has(m.id)) continue;
        seen.add(m.id);
        let problem: string | undefined;
        try {
          const e = store.event(m.id);
          if (e === undefined) problem = "unreadable";
          else decodeEvent(e);
        } catch (err) {
          problem = (err as Error)?.message ?? String(err);
        }
        if (problem !== undefined)
          out.push({
            code: "bad-event",
            session: s.id,
            event: m.id,
            message: problem.startsWith(`event ${m.id}:`) ? problem : `event ${m.id}: ${problem}`,
          });
      }
  return out;
}

/** Why `snapshot` differs from the replay of its chain, or undefined. */
function compareSnapshot(store: Store, snapshot: SnapshotRecord, bad: ReadonlySet<number>): string | undefined {
  const meta = store.eventMeta(snapshot.event);
  if (meta === undefined) return `event ${snapshot.event} does not exist`;
  const previous = meta.prior === null ? undefined : store.nearestSnapshot(meta.prior);
  const texts = new TextIndex();
  let from: { tree: ReturnType<typeof loadSnapshotVersion>["tree"]; depth: number; live: ReadonlySet<number> } | undefined;
  if (previous !== undefined && !bad.has(previous.event)) {
    const v = loadSnapshotVersion(store, previous, texts, new TextResolver(store));
    from = { tree: v.tree, depth: previous.depth, live: v.live ?? scanLifecycle(v.tree) };
  }
  const replayed = materializeVersion(store, snapshot.event, { fromGenesis: from === undefined, from, texts });
  const storedVersion = loadSnapshotVersion(store, snapshot, new TextIndex(), new TextResolver(store));
  const stored = storedVersion.tree;
  const tree = replayed.tree;
  if (stored.hwm !== tree.hwm || stored.size !== tree.size || stored.rootId !== tree.rootId || stored.fixed.join() !== tree.fixed.join())
    return `its header differs from the replay (hwm ${stored.hwm} vs ${tree.hwm}, size ${stored.size} vs ${tree.size})`;
  const a = new Map(stored.slotEntries());
  const b = new Map(tree.slotEntries());
  for (const i of new Set([...a.keys(), ...b.keys()])) {
    const sa = a.get(i);
    const sb = b.get(i);
    // A page the replay never touched is still the previous snapshot's page; equal addresses mean
    // equal stored bytes.
    if (sa instanceof LazyPage && sb instanceof LazyPage && sa.ref === sb.ref) continue;
    if (sa === undefined || sb === undefined) return `page ${i} is ${sa === undefined ? "missing from the snapshot" : "not in the replay"}`;
    if (encodePage(pageOf(sa)) !== encodePage(pageOf(sb))) return `page ${i} differs from the replay of its chain`;
  }
  if (storedVersion.live !== undefined) {
    const reason = compareLive(storedVersion.live, replayed.live);
    if (reason !== undefined) return `its lifecycle set (header "live") differs from the replay: ${reason}`;
  }
  return undefined;
}

/** Why two lifecycle sets differ (stored vs replayed), or undefined. */
export function compareLive(stored: ReadonlySet<number>, replayed: ReadonlySet<number>): string | undefined {
  const missing = [...replayed].filter((id) => !stored.has(id)).sort((x, y) => x - y);
  const extra = [...stored].filter((id) => !replayed.has(id)).sort((x, y) => x - y);
  if (missing.length === 0 && extra.length === 0) return undefined;
  const list = (ids: number[]) => ids.slice(0, 8).join(", ") + (ids.length > 8 ? ", …" : "");
  return [missing.length > 0 ? `missing ${list(missing)}` : "", extra.length > 0 ? `extra ${list(extra)}` : ""]
    .filter((s) => s !== "")
    .join("; ");
}

function pageOf(slot: Page | LazyPage): Page {
  return slot instanceof LazyPage ? slot.page : slot;
}
