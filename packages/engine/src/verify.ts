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
import { attrsWritten, encodePage, LazyPage, type Page, type Tree } from "@strata/dom";
import {
  drive,
  type EventMeta,
  isAsyncStore,
  type SessionId,
  type SnapshotRecord,
  type Store,
  type StoredEvent,
  type VerifyFinding,
  type VerifyHooks,
  type VerifyReport,
  value,
} from "@strata/store";
import { isBlobRef, treeBlobRefs } from "./blob-refs.ts";
import { decodeEvent } from "./events.ts";
import { scanLifecycle } from "./lifecycle.ts";
import { settle } from "./loading.ts";
import { materializeSteps } from "./materialize.ts";
import type { Port } from "./port.ts";
import { loadSnapshotSteps, loadTreeSteps } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";

type Steps<T> = Generator<unknown, T, unknown>;

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
          const reason = drive(compareSnapshotSteps(store, snapshot, bad)) as string | undefined;
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
  const missing = drive(missingHeadBlobsSteps(store, session)) as VerifyFinding[];
  return missing.length === 0 ? report : { ...report, ok: false, findings: [...report.findings, ...missing] };
}

/**
 * Blobs named by a branch head's tree (EN-33) that the file does not hold: what `prompt`, a
 * resume or an export of that branch would fail on. A head the store cannot materialize is
 * skipped here (the chain checks report it).
 */
export function* missingHeadBlobsSteps(store: Port, only: SessionId | undefined): Steps<VerifyFinding[]> {
  const out: VerifyFinding[] = [];
  const reported = new Set<string>();
  for (const s of only === undefined ? yield* value(store.listSessions()) : [{ id: only }]) {
    let branches: Awaited<ReturnType<Store["branches"]>>;
    try {
      branches = yield* value(store.branches(s.id));
    } catch {
      continue;
    }
    for (const b of branches) {
      let refs: Set<string>;
      try {
        const tree = (yield* materializeSteps(store, b.head)).tree;
        // Over the network the tree's structure is fetched first, in one call (decision 0037).
        if (isAsyncStore(store)) yield* loadTreeSteps(tree, { texts: false });
        refs = treeBlobRefs(tree);
      } catch {
        continue;
      }
      for (const hash of refs)
        if (!(yield* value(store.hasBlob(hash))) && !reported.has(`${s.id}:${hash}`)) {
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
    const findings: VerifyFinding[] = [...report.findings, ...(drive(checkPayloadsSteps(store, session, false)) as VerifyFinding[])];
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
 * Payload checks over every branch's chain, each event once, read in batches (one by one when a
 * batch cannot be read, so the unreadable one is named); with `blobs`, also that every blob an
 * event's inserted elements refer to is held (what the `checkEvent` hook checks on SQLite). A
 * branch or chain the store cannot read is skipped here: the store's own checks report it.
 */
function* checkPayloadsSteps(store: Port, only: SessionId | undefined, blobs: boolean): Steps<VerifyFinding[]> {
  const out: VerifyFinding[] = [];
  const seen = new Set<number>();
  const held = new Map<string, boolean>();
  const finding = (session: SessionId, event: number, problem: string): VerifyFinding => ({
    code: "bad-event",
    session,
    event: event as EventMeta["id"],
    message: problem.startsWith(`event ${event}:`) ? problem : `event ${event}: ${problem}`,
  });
  for (const s of only === undefined ? yield* value(store.listSessions()) : [{ id: only }]) {
    const chains: EventMeta[][] = [];
    try {
      for (const b of yield* value(store.branches(s.id))) chains.push(yield* value(store.chainMeta(b.head)));
    } catch {
      // reported by the store's own checks
    }
    for (const chain of chains) {
      const ids = chain.map((m) => m.id).filter((id) => !seen.has(id));
      for (const id of ids) seen.add(id);
      for (let i = 0; i < ids.length; i += PAYLOAD_BATCH) {
        const batch = ids.slice(i, i + PAYLOAD_BATCH);
        const read: { id: number; event?: StoredEvent; problem?: string }[] = [];
        try {
          const byId = new Map((yield* value(store.events(batch))).map((e) => [e.id as number, e]));
          for (const id of batch) read.push({ id, event: byId.get(id), problem: byId.has(id) ? undefined : "unreadable" });
        } catch {
          for (const id of batch)
            try {
              const e = yield* value(store.event(id));
              read.push({ id, event: e, problem: e === undefined ? "unreadable" : undefined });
            } catch (err) {
              read.push({ id, problem: (err as Error)?.message ?? String(err) });
            }
        }
        for (const r of read) {
          let problem = r.problem;
          const missing: string[] = [];
          if (problem === undefined && r.event !== undefined)
            try {
              const decoded = decodeEvent(r.event);
              if (blobs && decoded.kind === "patch")
                for (const op of decoded.ops)
                  attrsWritten(op, (tag, attr, v) => void (tag !== undefined && isBlobRef(tag, attr, v) && missing.push(v)));
            } catch (err) {
              problem = (err as Error)?.message ?? String(err);
            }
          const absent: string[] = [];
          for (const h of missing) {
            let has = held.get(h);
            if (has === undefined) held.set(h, (has = yield* value(store.hasBlob(h))));
            if (!has) absent.push(h);
          }
          if (absent.length > 0)
            problem = `it inserts elements that refer to blob${absent.length > 1 ? "s" : ""} ${absent.map((h) => h.slice(0, 12)).join(", ")}, which the file does not hold`;
          if (problem !== undefined) out.push(finding(s.id, r.id, problem));
        }
      }
    }
  }
  return out;
}

/** Events read per call by the payload checks. */
const PAYLOAD_BATCH = 500;

/**
 * The engine's checks over the asynchronous port (PostgreSQL), for `strata verify` there: the
 * store's own (`store.verify`: chains, digests, links, heads, snapshots' pages and blobs), then what
 * `verifyStore` adds on SQLite — every payload decodes and the blobs its elements name are held,
 * every snapshot equals the replay of its chain (from the previous snapshot, in event order), and
 * every branch head's tree names only blobs that are held. The store's hooks run synchronously,
 * so these checks run after its own rather than inside them, each read fetched as it is needed.
 */
export async function verifyPort(
  store: Port,
  session?: SessionId,
  progress?: (done: number, total: number) => void,
): Promise<VerifyReport> {
  if (!isAsyncStore(store)) return verifyStore(store, session, progress);
  const report = await store.verify(session, progress === undefined ? {} : { progress });
  const findings: VerifyFinding[] = [...report.findings];
  findings.push(...((await drive(checkPayloadsSteps(store, session, true))) as VerifyFinding[]));
  const bad = new Set<number>();
  for (const s of session === undefined ? await store.listSessions() : [{ id: session }]) {
    let marks: EventMeta[];
    try {
      marks = [...(await store.snapshots(s.id))].sort((a, b) => a.depth - b.depth);
    } catch {
      continue; // reported by the store's own checks
    }
    for (const m of marks) {
      let problem: string | undefined;
      let differs = false;
      try {
        const record = await store.nearestSnapshot(m.id);
        if (record === undefined || record.event !== m.id) continue;
        problem = (await drive(compareSnapshotSteps(store, record, bad))) as string | undefined;
        differs = problem !== undefined;
      } catch (e) {
        problem = `it cannot be checked against the replay of its chain: ${(e as Error)?.message ?? String(e)}`;
      }
      if (differs) bad.add(m.id);
      if (problem !== undefined)
        findings.push({ code: "snapshot-mismatch", session: s.id, event: m.id, message: `snapshot at event ${m.id}: ${problem}` });
    }
  }
  findings.push(...((await drive(missingHeadBlobsSteps(store, session))) as VerifyFinding[]));
  return { ...report, ok: findings.length === 0, findings };
}

/** Why `snapshot` differs from the replay of its chain, or undefined, as steps (on either port). */
export function* compareSnapshotSteps(store: Port, snapshot: SnapshotRecord, bad: ReadonlySet<number>): Steps<string | undefined> {
  const meta = yield* value(store.eventMeta(snapshot.event));
  if (meta === undefined) return `event ${snapshot.event} does not exist`;
  const previous = meta.prior === null ? undefined : yield* value(store.nearestSnapshot(meta.prior));
  const texts = new TextIndex();
  let from: { tree: Tree; depth: number; live: ReadonlySet<number> } | undefined;
  if (previous !== undefined && !bad.has(previous.event)) {
    const v = yield* loadSnapshotSteps(store, previous, texts, new TextResolver(store));
    from = { tree: v.tree, depth: previous.depth, live: v.live ?? (yield* settle(() => scanLifecycle(v.tree))) };
  }
  const replayed = yield* materializeSteps(store, snapshot.event, { fromGenesis: from === undefined, from, texts }, meta);
  const storedVersion = yield* loadSnapshotSteps(store, snapshot, new TextIndex(), new TextResolver(store));
  const stored = storedVersion.tree;
  const tree = replayed.tree;
  if (stored.hwm !== tree.hwm || stored.size !== tree.size || stored.rootId !== tree.rootId || stored.fixed.join() !== tree.fixed.join())
    return `its header differs from the replay (hwm ${stored.hwm} vs ${tree.hwm}, size ${stored.size} vs ${tree.size})`;
  // Over the network the pages compared (and their texts) are fetched as the comparison reaches them.
  const differs = yield* settle(() => {
    const a = new Map(stored.slotEntries());
    const b = new Map(tree.slotEntries());
    for (const i of new Set([...a.keys(), ...b.keys()])) {
      const sa = a.get(i);
      const sb = b.get(i);
      // A page the replay never touched is still the previous snapshot's page; equal addresses mean
      // equal stored bytes.
      if (sa instanceof LazyPage && sb instanceof LazyPage && sa.ref === sb.ref) continue;
      if (sa === undefined || sb === undefined)
        return `page ${i} is ${sa === undefined ? "missing from the snapshot" : "not in the replay"}`;
      if (encodePage(pageOf(sa)) !== encodePage(pageOf(sb))) return `page ${i} differs from the replay of its chain`;
    }
    return undefined;
  });
  if (differs !== undefined) return differs;
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
