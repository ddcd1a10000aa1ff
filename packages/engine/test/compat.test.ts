/**
 * The compatibility promise for what the session core reads (docs/compatibility.md; EN-1, EN-2,
 * EN-8 … EN-11, EN-31, EN-32): the session fixture of every release (`fixtures/sessions/<v>.db`,
 * an agent session written by that release's `strata`, with its `strata export` beside it) opens
 * with this build — read-only and read-write — to the heads that release exported, its snapshots
 * (header `strata-snapshot@1`, pages, text references) equal to replay; its bundle imports as
 * `strata-bundle@2` and, without digests, as `strata-bundle@1`. What a newer strata writes is
 * refused with a message naming it and saying to upgrade, and nothing is written: a bundle of a
 * later format, a bundle or a log holding an event of a kind this build does not know.
 */
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { nodeId, toXml } from "@strata/dom";
import { type EventId, eventDigest, openStore, type SessionId, type Store } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V1,
  type Bundle,
  BundleError,
  decodeSse,
  EngineError,
  encodeSse,
  exportBundle,
  type Frame,
  importBundle,
  materialize,
  parseBundle,
  replayVerify,
  Session,
  SseDecoder,
  verifyStore,
} from "../src/index.ts";
import { cleanup, fileStore, sha, tempDir } from "./bundle-kit.ts";

afterAll(cleanup);

// biome-ignore lint/suspicious/noExplicitAny: the tests edit bundles as JSON
type Json = any;

const FIXTURES = join(import.meta.dirname, "../../../fixtures/sessions");
/** Every release's session fixture: its database and the bundle that release exported from it. */
const RELEASES = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".db"))
  .sort()
  .map((f) => ({ release: f.slice(0, -3), db: join(FIXTURES, f), bundle: join(FIXTURES, `${f.slice(0, -3)}.bundle.json`) }));

/** A copy of `path` in a directory of its own. */
function copyOf(path: string): string {
  const copy = join(tempDir(), "fixture.db");
  copyFileSync(path, copy);
  return copy;
}

/** What the fixture's bundle says each branch's head is (XML) and where (its digest). */
function exported(bundle: Bundle): Map<string, { xml: string; digest: string }> {
  const digest = new Map(bundle.events.map((e) => [e.id, e.digest as string]));
  return new Map(bundle.branches.map((b) => [b.name, { xml: bundle.heads[b.name] as string, digest: digest.get(b.head) as string }]));
}

/** Each branch of `session` in `store` opened as a Session: its head's XML and digest. */
function opened(store: Store, session: SessionId): Map<string, { xml: string; digest: string }> {
  return new Map(
    store.branches(session).map((b) => {
      const s = Session.open(store, session, { branch: b.name }).session;
      const head = { xml: toXml(s.tree), digest: s.head.digest };
      s.close();
      return [b.name, head];
    }),
  );
}

describe("the session fixture of every release reads with this build", () => {
  it("there is one for the release this build is (fixtures/sessions/0.1.0.db and its bundle)", () => {
    expect(RELEASES.map((r) => r.release)).toContain("0.1.0");
    for (const r of RELEASES) expect(() => readFileSync(r.bundle), r.bundle).not.toThrow();
  });

  for (const { release, db, bundle: bundlePath } of RELEASES) {
    const bundle = parseBundle(readFileSync(bundlePath, "utf8"));

    it(`${release}: read-only, every branch opens to the head that release exported; replay proof, snapshots and verify clean; nothing changes`, () => {
      const original = sha(db);
      const path = copyOf(db);
      const store = openStore(path, { readonly: true });
      const [info] = store.listSessions();
      expect(info?.id).toBe(bundle.session.id);
      const session = info?.id as SessionId;
      expect(opened(store, session)).toEqual(exported(bundle));
      expect(store.snapshots(session).length, "the fixture has snapshots to read").toBeGreaterThan(0);
      for (const b of store.branches(session)) {
        const proof = replayVerify(store, session, { branch: b.name });
        expect(proof, b.name).toMatchObject({ ok: true });
      }
      expect(replayVerify(store, session).snapshots, "main's chain crosses a snapshot").toBeGreaterThan(0);
      expect(verifyStore(store)).toMatchObject({ ok: true, findings: [] });
      // any event, from its nearest snapshot plus the tail, equals replay from genesis (EN-4)
      for (const m of store.log(session).filter((_, i) => i % 17 === 0))
        expect(toXml(materialize(store, m.id)), `event ${m.id}`).toBe(toXml(materialize(store, m.id, { fromGenesis: true })));
      // the export this build makes of it is the release's, event for event
      expect(exportBundle(store, session)).toEqual(bundle);
      store.close();
      expect(sha(path), "a read-only open writes nothing").toBe(original);
      expect(sha(db), "the fixture itself is never written").toBe(original);
    });

    it(`${release}: read-write on a copy, each branch opens, takes a commit of this build and reopens to the same tree`, () => {
      const path = copyOf(db);
      const store = openStore(path);
      const session = store.listSessions()[0]?.id as SessionId;
      const body = nodeId(3);
      const trees = new Map<string, string>();
      for (const b of store.branches(session)) {
        const s = Session.open(store, session, { branch: b.name }).session;
        s.commit([["ins", body, null, { tag: "note", attrs: { by: "this build" }, text: `written on ${b.name}` }]], { label: "compat" });
        trees.set(b.name, toXml(s.tree));
        s.close();
      }
      store.close();
      const reopened = openStore(path);
      for (const [name, xml] of trees) expect(toXml(Session.open(reopened, session, { branch: name }).session.tree), name).toBe(xml);
      expect(verifyStore(reopened)).toMatchObject({ ok: true, findings: [] });
      for (const name of trees.keys()) expect(replayVerify(reopened, session, { branch: name }).ok, name).toBe(true);
      reopened.close();
    });

    it(`${release}: its bundle imports as ${BUNDLE_FORMAT}, and without digests as ${BUNDLE_FORMAT_V1}, to the same heads`, () => {
      const { store } = fileStore();
      const report = importBundle(store, bundle);
      expect(report).toMatchObject({
        format: BUNDLE_FORMAT,
        digests: true,
        eventCount: bundle.events.length,
        branchCount: bundle.branches.length,
      });
      expect(opened(store, report.session)).toEqual(exported(bundle));
      const v1: Json = JSON.parse(readFileSync(bundlePath, "utf8"));
      v1.format = BUNDLE_FORMAT_V1;
      for (const e of v1.events) delete e.digest;
      const old = importBundle(store, v1);
      expect(old).toMatchObject({ format: BUNDLE_FORMAT_V1, digests: false, eventCount: bundle.events.length });
      // digests are not carried by @1, but the store computes the same chain (ST-21): the same heads, digests included
      expect(opened(store, old.session)).toEqual(exported(bundle));
      expect(verifyStore(store)).toMatchObject({ ok: true, findings: [] });
      store.close();
    });
  }
});

/** A small current session in a file, closed; returns its path and ids. */
function smallSession(): { path: string; session: SessionId; head: EventId; bundle: Bundle } {
  const { store, path } = fileStore();
  const s = Session.create(store, { title: "small" });
  s.commit([["ins", nodeId(3), null, { tag: "turn", text: "hello" }]], { label: "one" });
  const head = s.commit([["ins", nodeId(3), null, { tag: "turn", text: "again" }]], { label: "two" }).id;
  const bundle = exportBundle(store, s.id);
  const session = s.id;
  store.close();
  return { path, session, head, bundle };
}

/** The error `f` throws. */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected an error");
}

describe("what a newer strata writes is refused, naming it and saying to upgrade; nothing is written", () => {
  it("a bundle of a later format (strata-bundle@3): refused at `format` before the database is touched", () => {
    const { path, bundle } = smallSession();
    const future: Json = { ...JSON.parse(JSON.stringify(bundle)), format: "strata-bundle@3" };
    const before = sha(path);
    const store = openStore(path);
    for (const attempt of [() => parseBundle(JSON.stringify(future)), () => importBundle(store, future)]) {
      const e = thrown(attempt) as BundleError;
      expect(e).toBeInstanceOf(BundleError);
      expect(e.code).toBe("bad-bundle");
      expect(e.path).toBe("format");
      expect(e.message).toBe(
        'format: is "strata-bundle@3"; this strata reads "strata-bundle@2" and "strata-bundle@1"; a newer strata wrote it: upgrade strata to import it',
      );
    }
    expect(store.listSessions()).toHaveLength(1);
    store.close();
    expect(sha(path), "the database is byte-for-byte as it was").toBe(before);
    // a format that is not a later strata's is not called one
    expect((thrown(() => parseBundle(JSON.stringify({ ...future, format: "tarball" }))) as Error).message).not.toMatch(/newer/);
  });

  it("a bundle holding an event of a kind from the future (foo@1, its digest right): refused at that event's kind", () => {
    const { bundle } = smallSession();
    const b: Json = JSON.parse(JSON.stringify(bundle));
    const last = b.events.at(-1);
    const e = { id: last.id + 1, prior: last.id, kind: "foo@1", label: "future", by: null, ts: last.ts + 1, data: '{"ops":[]}' };
    b.events.push({ ...e, digest: eventDigest(last.digest, e) });
    b.branches[0].head = e.id;
    const error = thrown(() => parseBundle(JSON.stringify(b))) as BundleError;
    expect(error).toBeInstanceOf(BundleError);
    expect(error.path).toBe(`events[${b.events.length - 1}].kind`);
    expect(error.message).toMatch(
      /"foo@1" is not an event kind this strata knows \(genesis@1, patch@1\); if a newer strata wrote it, upgrade strata/,
    );
  });

  it("a log holding an event of a kind from the future (foo@1): the store opens it, Session.open refuses with unknown-kind naming the event; verify reports it; no byte changes", () => {
    const { path, session, head } = smallSession();
    const writer = openStore(path);
    const [future] = writer.append(session, "main", head, [{ kind: "foo@1", label: "future", data: '{"ops":[]}' }]);
    writer.close();
    const before = sha(path);
    for (const readonly of [true, false]) {
      const store = openStore(path, { readonly });
      expect(store.branch(session, "main")?.head, "the store knows no kinds: it reads the log as it is").toBe(future?.id);
      const e = thrown(() => Session.open(store, session)) as EngineError;
      expect(e).toBeInstanceOf(EngineError);
      expect(e.code).toBe("unknown-kind");
      expect(e.message).toBe(
        `event ${future?.id} has kind "foo@1", which this strata does not know (it knows genesis@1, patch@1); it may have been written by a newer version of strata: upgrade strata to read it`,
      );
      // what came before it still reads; verify reports the event instead of throwing
      expect(toXml(materialize(store, head), { ids: false })).toBe(
        "<session><meta/><body><turn>again</turn><turn>hello</turn></body></session>",
      );
      const report = verifyStore(store);
      expect(report.ok).toBe(false);
      expect(report.findings.map((f) => [f.code, f.event, f.message.includes('"foo@1"')])).toEqual([["bad-event", future?.id, true]]);
      const refused = thrown(() => exportBundle(store, session)) as BundleError;
      expect(refused).toBeInstanceOf(BundleError);
      expect(refused.code).toBe("source-damaged");
      expect(refused.message).toMatch(/"foo@1", which this strata does not know .*upgrade strata/);
      store.close();
      expect(sha(path), `${readonly ? "read-only" : "read-write"}: the file is byte-for-byte as it was`).toBe(before);
    }
  });

  it("SSE (EN-25): a frame kind from the future is unknown-kind after the frames before it; an error code from the future reads as internal, its message kept", () => {
    const lagged = encodeSse({ type: "lagged", missed: 1 });
    const got: Frame[] = [];
    const decoder = new SseDecoder((f) => got.push(f));
    const e = thrown(() => decoder.push(`${lagged}event: foo@1\ndata: {}\n\n`)) as EngineError;
    expect(e).toBeInstanceOf(EngineError);
    expect(e.code).toBe("unknown-kind");
    expect(e.message).toBe('SSE frame kind "foo@1" is not one strata writes');
    expect(got).toEqual([{ type: "lagged", missed: 1 }]);
    expect(decodeSse('event: error@1\ndata: {"code":"quota","message":"the server ran out","event":null}\n\n')).toEqual([
      { type: "error", code: "internal", message: "the server ran out", event: null },
    ]);
  });
});
