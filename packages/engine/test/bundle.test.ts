/**
 * EN-32, EN-33: bundles — export, a decoder that checks every field, and an atomic import that
 * proves the history it brings in. Real SQLite files in temp dirs throughout.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { nodeId, toXml, walkTree } from "@strata/dom";
import { type EventId, openStore, type SessionId, type Store } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V1,
  type Bundle,
  decodeBundle,
  exportBundle,
  importBundle,
  materialize,
  parseBundle,
  Session,
  verifyStore,
} from "../src/index.ts";
import { isBlobRef, treeBlobRefs } from "../src/internal.ts";
import { cleanup, fileStore, NOT_A_BLOB, richSession, sha } from "./bundle-kit.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests damage bundles field by field
type Json = any;

afterAll(cleanup);

let source: Store;
let sourceSession: SessionId;
let pristine: Bundle;
/** A fresh, writable JSON copy of the rich session's bundle. */
const copy = (): Json => JSON.parse(JSON.stringify(pristine));

beforeAll(() => {
  source = fileStore("source.db").store;
  sourceSession = richSession(source);
  pristine = exportBundle(source, sourceSession);
});

function chainContent(store: Store, head: EventId): unknown[] {
  return store.chain(head, 0, Number.MAX_SAFE_INTEGER).map((e) => [e.kind, e.label, e.by, e.ts, e.data]);
}

describe("EN-32 export and import", () => {
  it("a session with blobs, a fork and a rewind imports with every branch, event and head intact, and verifies", () => {
    const { store } = fileStore();
    const r = importBundle(store, decodeBundle(copy()));
    expect(r).toMatchObject({
      importedFrom: sourceSession,
      format: BUNDLE_FORMAT,
      digests: true,
      branchCount: 3,
      eventCount: pristine.events.length,
      blobCount: 9,
      dropped: [],
    });
    expect(Object.keys(pristine.blobs)).not.toContain(NOT_A_BLOB); // a request's own hash is no blob
    expect(pristine.events.every((e) => /^[0-9a-f]{64}$/.test(e.digest as string))).toBe(true);
    const names = (s: Store, id: SessionId) =>
      s
        .branches(id)
        .map((b) => b.name)
        .sort();
    expect(names(store, r.session)).toEqual(names(source, sourceSession));
    for (const b of source.branches(sourceSession)) {
      const copied = store.branch(r.session, b.name);
      expect(copied).toBeDefined();
      expect(chainContent(store, copied?.head as EventId)).toEqual(chainContent(source, b.head));
      expect(toXml(materialize(store, copied?.head as EventId))).toBe(toXml(materialize(source, b.head)));
    }
    for (const h of Object.keys(pristine.blobs)) expect(store.getBlob(h)?.equals(source.getBlob(h) as Buffer)).toBe(true);
    const custom = /"digest":"([0-9a-f]{64})"/.exec(pristine.events.find((e) => e.label === "custom")?.data as string)?.[1] as string;
    expect(store.hasBlob(custom), "a blob an unknown attribute names is kept").toBe(true);
    expect(store.getSession(r.session)?.metadata).toMatchObject({ purpose: "bundle tests", nested: { n: 1 }, importedFrom: sourceSession });
    expect(verifyStore(store).ok).toBe(true);
  });

  it("an imported session has snapshots like the original, so it opens from one instead of replaying from genesis", () => {
    const { store } = fileStore();
    const r = importBundle(store, copy(), { snapshotEvery: 32 });
    expect(r.snapshotCount).toBeGreaterThanOrEqual(4);
    expect(store.snapshots(r.session).length).toBe(r.snapshotCount);
    expect(() => importBundle(store, copy(), { snapshotEvery: 0 })).toThrow(/snapshotEvery must be a whole number ≥ 1, got 0/);
    const deepest = store.branches(r.session).sort((a, b) => b.headDepth - a.headDepth)[0];
    expect(deepest?.headDepth).toBeGreaterThan(128);
    expect(store.nearestSnapshot(deepest?.head as EventId)?.depth).toBeGreaterThan((deepest?.headDepth as number) - 32);
    expect(verifyStore(store).ok).toBe(true);
  });

  it("no node id is ever minted twice after an import (L5): every branch starts a new line", () => {
    const { store } = fileStore();
    const r = importBundle(store, copy());
    const used = (branch: string) => {
      const s = Session.open(store, r.session, { branch }).session;
      const out = new Set<number>();
      walkTree(s.tree, s.tree.rootId, (rec) => void out.add(rec.id));
      return { s, out };
    };
    const kept = used(store.branches(r.session).find((b) => b.origin !== "genesis" && b.name.startsWith("rewound/"))?.name as string).out;
    const fork = used("try-2").out;
    const { s } = used("main");
    s.commit([["ins", nodeId(3), null, { tag: "new", children: [{ tag: "x" }, { tag: "y" }] }]]);
    for (const e of s.select("new, new *")) {
      expect(kept.has(e.id), `id ${e.id} is used on the kept branch`).toBe(false);
      expect(fork.has(e.id), `id ${e.id} is used on try-2`).toBe(false);
    }
  });

  it("a bundle imports twice as two sessions; decodeBundle returns a frozen copy that later changes to the input do not reach", () => {
    const { store } = fileStore();
    const input = copy();
    const decoded = decodeBundle(input);
    input.events[5].data = "changed after decoding";
    expect(Object.isFrozen(decoded.events[5])).toBe(true);
    const a = importBundle(store, decoded);
    const b = importBundle(store, decoded);
    expect(a.session).not.toBe(b.session);
    expect(store.listSessions()).toHaveLength(2);
    expect(verifyStore(store).ok).toBe(true);
  });

  it("blobs nothing refers to are dropped, not stored, and listed in the report", () => {
    const { store } = fileStore();
    const b = copy();
    const extra = Buffer.from("nobody refers to me");
    const hash = createHash("sha256").update(extra).digest("hex");
    b.blobs[hash] = extra.toString("base64");
    const r = importBundle(store, b);
    expect(r.dropped).toEqual([hash]);
    expect(store.hasBlob(hash)).toBe(false);
    expect(r.blobCount).toBe(9);
  });

  it("a strata-bundle@1 (no digests) still imports, verified by replay", () => {
    const { store } = fileStore();
    const b = copy();
    b.format = BUNDLE_FORMAT_V1;
    for (const e of b.events) delete e.digest;
    const r = importBundle(store, b);
    expect(r).toMatchObject({ format: BUNDLE_FORMAT_V1, digests: false, eventCount: pristine.events.length });
    expect(verifyStore(store).ok).toBe(true);
  });

  it("exporting one branch: the bundle's main is the genesis event, and nothing minted on main after the import reuses an id (L5)", () => {
    const b = exportBundle(source, sourceSession, { branch: "try-2" });
    expect(b.branches.map((x) => [x.name, x.head === b.events[0]?.id])).toEqual([
      ["main", true],
      ["try-2", false],
    ]);
    const { store } = fileStore();
    const r = importBundle(store, b);
    const onFork = new Set<number>();
    const fork = Session.open(store, r.session, { branch: "try-2" }).session;
    walkTree(fork.tree, fork.tree.rootId, (rec) => void onFork.add(rec.id));
    const main = Session.open(store, r.session).session;
    expect(main.head.depth).toBe(1);
    main.commit([["ins", nodeId(3), null, { tag: "new", children: [{ tag: "x" }] }]]);
    for (const e of main.select("new, new *")) expect(onFork.has(e.id), `id ${e.id} is used on try-2`).toBe(false);
  });

  it("a strata-bundle@1 of one branch (no main, as 0012 wrote them) imports with main at the genesis event, on a new line (L5)", () => {
    const b = JSON.parse(JSON.stringify(exportBundle(source, sourceSession, { branch: "try-2" })));
    b.format = BUNDLE_FORMAT_V1;
    for (const e of b.events) delete e.digest;
    b.branches = b.branches.filter((x: Json) => x.name !== "main");
    delete b.heads.main;
    const { store } = fileStore();
    const r = importBundle(store, b);
    expect(store.branch(r.session, "main")).toMatchObject({ headDepth: 1, pinned: true });
    const onFork = new Set<number>();
    const fork = Session.open(store, r.session, { branch: "try-2" }).session;
    walkTree(fork.tree, fork.tree.rootId, (rec) => void onFork.add(rec.id));
    const main = Session.open(store, r.session).session;
    main.commit([["ins", nodeId(3), null, { tag: "new" }]]);
    expect(onFork.has(main.selectOne("new")?.id as number)).toBe(false);
  });

  it("export refuses a session whose log refers to a blob its database lacks (the bundle would not import)", () => {
    const { store } = fileStore();
    const s = Session.create(store);
    s.commit([["ins", nodeId(2), null, { tag: "template", attrs: { name: "system", hash: "ab".repeat(32) } }]]);
    expect(() => exportBundle(store, s.id)).toThrow(
      /does not make a valid bundle \(events\[1\]\.data: refers to blob (ab){32} \(EN-33\).*strata verify/,
    );
    expect(() => exportBundle(store, s.id)).toThrow(expect.objectContaining({ code: "source-damaged" }));
    expect(() => exportBundle(store, s.id, { branch: "nope" })).toThrow(expect.objectContaining({ code: "not-found" }));
  });

  it("parseBundle names where text is not JSON", () => {
    expect(() => parseBundle("{")).toThrow(/it is not JSON/);
    expect(() => parseBundle(JSON.stringify(pristine))).not.toThrow();
  });
});

describe("EN-32 import is one transaction", () => {
  it("a store failure in the middle of the import (a trigger that aborts the 60th insert) leaves the file unchanged", () => {
    const { store, path } = fileStore();
    richSession(store);
    store.close();
    const Database = createRequire(join(import.meta.dirname, "..", "..", "store", "package.json"))("better-sqlite3");
    const raw = new Database(path);
    const count = raw.prepare("SELECT count(*) AS n FROM events").get().n as number;
    raw.exec(
      `CREATE TRIGGER fail_import AFTER INSERT ON events WHEN (SELECT count(*) FROM events) > ${count + 60} BEGIN SELECT RAISE(ABORT, 'the disk says no'); END`,
    );
    raw.close();
    const before = sha(path);
    const s = openStore(path);
    expect(() => importBundle(s, copy())).toThrow(/the disk says no/);
    expect(s.listSessions()).toHaveLength(1);
    s.close();
    expect(sha(path)).toBe(before);
  });
});

describe("EN-33 blob references", () => {
  it("are the attributes BLOB_REFS lists per element, not every attribute that holds a hash", () => {
    const h = "a".repeat(64);
    expect(isBlobRef("template", "hash", h)).toBe(true);
    expect(isBlobRef("request", "system", h)).toBe(true);
    expect(isBlobRef("request", "hash", h)).toBe(false);
    expect(isBlobRef("turn", "hash", h)).toBe(false);
    expect(isBlobRef("template", "hash", "A".repeat(64))).toBe(false);
    expect(isBlobRef("__proto__", "hash", h)).toBe(false);
    expect(isBlobRef("constructor", "hash", h)).toBe(false);
    const deepest = source.branches(sourceSession).sort((a, b) => b.headDepth - a.headDepth)[0];
    const refs = treeBlobRefs(materialize(source, deepest?.head as EventId));
    expect(refs.has(NOT_A_BLOB)).toBe(false);
    for (const r of refs) expect(source.hasBlob(r), r).toBe(true);
    expect(refs.size).toBeGreaterThanOrEqual(7);
  });
});

describe("EN-32 import proves the stored heads", () => {
  it("a stored head whose digest is not the bundle's (a trigger that rewrites it) fails the import check and rolls back", () => {
    const { store, path } = fileStore();
    store.close();
    const Database = createRequire(join(import.meta.dirname, "..", "..", "store", "package.json"))("better-sqlite3");
    const raw = new Database(path);
    raw.exec(
      "CREATE TRIGGER bad_digest AFTER INSERT ON events WHEN NEW.label = 'after' BEGIN UPDATE events SET digest = zeroblob(32) WHERE id = NEW.id; END",
    );
    raw.close();
    const before = sha(path);
    const s = openStore(path);
    let error: unknown;
    try {
      importBundle(s, copy());
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "import-check" });
    expect((error as Error).message).toMatch(
      /import check failed on branch main: the stored head's digest 0000000000000000… is not the bundle's [0-9a-f]{16}… \(nothing was imported\)/,
    );
    expect(s.listSessions()).toHaveLength(0);
    s.close();
    expect(sha(path)).toBe(before);
  });
});

describe("EN-32 a valid bundle of 100,000 events", () => {
  it("decodes and imports in reasonable time, with snapshots", () => {
    const { store } = fileStore("big-source.db");
    const s = Session.create(store);
    s.commit([["ins", nodeId(3), null, { tag: "list" }]]);
    const list = s.selectOne("list")?.id as number;
    for (let k = 0; k < 100; k++)
      s.commitMany(
        Array.from({ length: 1000 }, (_, i) => ({
          change: [["ins", nodeId(list), null, { tag: "item", attrs: { n: String(k * 1000 + i) } }]] as const,
          label: "item",
        })),
      );
    const text = JSON.stringify(exportBundle(store, s.id));
    const { store: dst } = fileStore("big.db");
    const r = importBundle(dst, parseBundle(text));
    expect(r.eventCount).toBe(100_002);
    expect(r.snapshotCount).toBeGreaterThan(700);
    const head = dst.branch(r.session, "main")?.head as EventId;
    expect(dst.eventMeta(head)?.depth).toBe(100_002);
    expect(dst.nearestSnapshot(head)?.depth).toBeGreaterThan(100_002 - 128);
    expect(toXml(materialize(dst, head))).toBe(toXml(s.tree));
    const imported = Session.open(dst, r.session).session;
    imported.commit([["ins", nodeId(list), null, { tag: "after-import" }]]);
    expect(imported.select("item")).toHaveLength(100_000);
  }, 600_000);
});
