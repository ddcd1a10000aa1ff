/**
 * The compatibility promise for the store file (docs/compatibility.md; ST-2 … ST-4, ST-24): every
 * database fixture kept in the repository — `fixtures/store/v<N>.db`, one per schema version ever
 * released, and the release session fixtures `fixtures/sessions/*.db` — opens with this build
 * read-only (unmigrated, untouched) and read-write (migrated, on a copy), and both read back the
 * same sessions, branches, events, digests, snapshots and blobs; and a file of a newer schema is
 * refused by every kind of open with a message naming its version and what to do, its bytes
 * unchanged.
 */
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  type EventId,
  type EventMeta,
  openStore,
  SCHEMA_VERSION,
  type SnapshotRecord,
  type SqliteStore,
  type Store,
  StoreError,
} from "../src/index.ts";
import { ev, tempDir } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "../../..");
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const hashOf = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/** Every database fixture of the repository, by path relative to the root. */
function fixtures(): string[] {
  const list = (dir: string) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith(".db"))
      .sort()
      .map((f) => `${dir}/${f}`);
  return [...list("fixtures/store"), ...list("fixtures/sessions")];
}

/**
 * What each fixture holds, as this build reads it: sessions, branches and events counted, and a
 * hash of everything {@link contents} reads. Pinned, so a build that reads any of it differently
 * (a migration that loses or changes a field, a digest computed otherwise) fails here. A new
 * fixture is added here with its figures.
 */
const PINNED: Record<string, { sessions: number; branches: number; events: number; schema: number; hash: string }> = {
  "fixtures/store/v1.db": {
    sessions: 1,
    branches: 3,
    events: 8,
    schema: 1,
    hash: "b8f1d6ab5f155d5e203771e83d233d0a87ef087de0642c25d9b72beb6f3183a6",
  },
  "fixtures/store/v2.db": {
    sessions: 2,
    branches: 4,
    events: 12,
    schema: 2,
    hash: "37e0ea6638b1eb7ef8bdf783c5594abce3e90593d7c2b88a836eaff4b0704c1a",
  },
  "fixtures/store/v3.db": {
    sessions: 2,
    branches: 4,
    events: 12,
    schema: 3,
    hash: "2521fe15b0074625ddb780dbdce4f0ee5f54f7b6b191fbfeea1cf69d8e3b136e",
  },
  "fixtures/store/v4.db": {
    sessions: 2,
    branches: 4,
    events: 12,
    schema: 4,
    hash: "0e4090589e3822a845884149f028ad48f5006764393ee46acd308abfd9d382ac",
  },
  "fixtures/store/v5.db": {
    sessions: 2,
    branches: 4,
    events: 13,
    schema: 5,
    hash: "3c90c5e0ae68aac24ccfdcaab6b14fb71aa690d8b7901482e1c423f31638226b",
  },
  "fixtures/store/v6.db": {
    sessions: 2,
    branches: 4,
    events: 13,
    schema: 6,
    hash: "afd63977bf118bde95e0f057e7bb8651728bc85c98652ba86590dd3feea37546",
  },
  "fixtures/sessions/0.1.0.db": {
    sessions: 1,
    branches: 4,
    events: 293,
    schema: 3,
    hash: "2b7055cedf9a0e050c8f3c5246d1cffa41c2d187ad2f81a88abf03f221d12fbd",
  },
};

/** A copy of a fixture in a directory of its own. */
function copyOf(fixture: string): { dir: string; path: string } {
  const dir = tempDir();
  const path = join(dir, fixture.split("/").at(-1) as string);
  copyFileSync(join(ROOT, fixture), path);
  return { dir, path };
}

/** Every file of `dir` with the digest of its bytes. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = sha(join(dir, f));
  return out;
}

/** An event's fields as the promise covers them (listed, so a field added to the API later changes no pin). */
const meta = (e: EventMeta) => [e.id, e.session, e.prior, e.depth, e.kind, e.label, e.by, e.ts, e.digest];

/** Everything a store holds that the public API reads: sessions, branches, every chain, snapshots and the blobs they name. */
function contents(store: Store) {
  const events = new Set<number>();
  const sessions = store.listSessions().map((s) => {
    const branches = store.branches(s.id).map((b) => {
      const chain = store.chain(b.head);
      for (const e of chain) events.add(e.id);
      expect(store.chainMeta(b.head).map(meta), `${s.id}@${b.name}: listing and chain agree`).toEqual(chain.map(meta));
      expect(store.chainData(b.head)).toEqual(chain.map((e) => e.data));
      expect(store.log(s.id, { branch: b.name }).map(meta)).toEqual(chain.map(meta));
      return {
        branch: [b.session, b.name, b.head, b.headDepth, b.created, b.origin, b.pinned, b.originEvent],
        chain: chain.map((e) => [...meta(e), e.data]),
      };
    });
    const snapshots = store.snapshots(s.id).map((m) => {
      const snapshot = store.nearestSnapshot(m.id) as SnapshotRecord;
      const pages = snapshot.pages.map((p) => (p === null ? null : [p, store.getBlob(p)?.toString("base64")]));
      return [m.id, snapshot.event, snapshot.depth, snapshot.header, pages];
    });
    return {
      session: [s.id, s.title, s.created, s.metadata],
      found: store.findSessions(s.id.slice(0, 10)).map((x) => x.id),
      branches,
      snapshots,
    };
  });
  const ids = [...events].sort((a, b) => a - b) as EventId[];
  const data = store.eventData(ids);
  for (const e of store.events(ids)) {
    expect(data.get(e.id), `eventData(${e.id})`).toBe(e.data);
    expect(store.eventMeta(e.id) && meta(store.eventMeta(e.id) as EventMeta)).toEqual(meta(e));
  }
  return { sessions, events: ids.length };
}

describe("every database fixture opens with this build, read-only and read-write, and reads back the same", () => {
  it("fixtures/store holds a database of every schema version up to SCHEMA_VERSION, and every fixture is pinned", () => {
    const store = fixtures().filter((f) => f.startsWith("fixtures/store/"));
    expect(store).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => `fixtures/store/v${i + 1}.db`));
    expect(Object.keys(PINNED).sort()).toEqual(fixtures().sort());
  });

  for (const fixture of fixtures())
    it(`${fixture}: read-only unmigrated, read-write migrated on a copy, the same contents; the fixture is never written`, () => {
      const pinned = PINNED[fixture];
      expect(pinned, `${fixture} is not pinned in PINNED`).toBeDefined();
      if (pinned === undefined) return;
      const original = sha(join(ROOT, fixture));
      const { dir, path } = copyOf(fixture);
      expect(readFileSync(path).readUInt32BE(60), "the header's user_version").toBe(pinned.schema);

      // Read-only: the file is read as it is (ST-4, ST-24): not migrated, not changed, nothing left next to it.
      const before = listing(dir);
      const ro = openStore(path, { readonly: true }) as SqliteStore;
      expect(ro.schemaVersion).toBe(pinned.schema);
      expect(ro.access).toBe("read-only");
      const read = contents(ro);
      expect(ro.verify().findings).toEqual([]);
      ro.close();
      expect(listing(dir), "a read-only open changes nothing").toEqual(before);
      expect(read.sessions.length).toBe(pinned.sessions);
      expect(read.sessions.flatMap((s) => s.branches).length).toBe(pinned.branches);
      expect(read.events).toBe(pinned.events);
      expect(hashOf(read), `${fixture}: contents as read`).toBe(pinned.hash);

      // Read-write: migrated to SCHEMA_VERSION on its first open for writing; the same contents.
      const rw = openStore(path) as SqliteStore;
      expect(rw.schemaVersion).toBe(SCHEMA_VERSION);
      expect(rw.access).toBe("read-write");
      expect(rw.database.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      expect(contents(rw)).toEqual(read);
      expect(rw.verify().findings).toEqual([]);
      // SE-6: an older file's events are its search backlog (none indexed yet); a v4 file's are indexed.
      if (pinned.schema < 4) {
        expect(rw.searchBacklog()).toBe(Math.max(...(rw.database.prepare("SELECT id FROM events").pluck().all() as number[])));
        expect(rw.search({ text: "x" })).toEqual([]);
      } else {
        expect(rw.searchBacklog()).toBe(0);
        expect(rw.search({ text: "planning experiment" }).map((h) => [h.label, h.snippet, h.marks])).toEqual([
          [
            "x1",
            "the experiment branch reads notes/planning.md",
            [
              [4, 14],
              [34, 42],
            ],
          ],
        ]);
        expect(rw.search({ text: "DÉCISIONS 𝄞" }).map((h) => h.label)).toEqual(["only"]);
        // SE-8: a text indexed with no copy kept is derived again from the payload for its snippet.
        if (pinned.schema >= 5)
          expect(rw.search({ text: "derived payload" }).map((h) => [h.label, h.snippet])).toEqual([
            ["derived", "a derived text found again from its payload"],
          ]);
      }
      // This build writes into it: an append on every session's main, then the file reads back as written.
      const appended = new Map<string, EventId>();
      for (const s of rw.listSessions()) {
        const head = rw.branch(s.id, "main")?.head as EventId;
        const [e] = rw.append(s.id, "main", head, [ev('{"ops":[]}', "written-by-this-build")]);
        appended.set(s.id, e?.id as EventId);
      }
      rw.close();
      const again = openStore(path, { readonly: true });
      expect(again.schemaVersion).toBe(SCHEMA_VERSION);
      for (const [session, id] of appended) {
        expect(again.branch(session as never, "main")?.head).toBe(id);
        expect(again.log(session as never).at(-1)?.label).toBe("written-by-this-build");
      }
      expect(again.verify().findings).toEqual([]);
      again.close();
      expect(sha(join(ROOT, fixture)), "the fixture itself is never written").toBe(original);
    });
});

describe("a file of a newer schema is refused by every kind of open, untouched", () => {
  /** A copy of the newest fixture, migrated, with its user_version raised as a newer strata would leave it. */
  function newer(): { dir: string; path: string } {
    const { dir, path } = copyOf(`fixtures/store/v${SCHEMA_VERSION}.db`);
    openStore(path).close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    return { dir, path };
  }

  it("read-write, read-only and create:false opens fail with newer-schema naming both versions and 'upgrade strata'; no byte changes", () => {
    const { dir, path } = newer();
    const before = listing(dir);
    expect(Object.keys(before)).toEqual([`v${SCHEMA_VERSION}.db`]);
    for (const options of [{}, { readonly: true }, { create: false }, { durability: "full" as const }]) {
      let error: unknown;
      try {
        openStore(path, options).close();
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe("newer-schema");
      expect((error as StoreError).message).toBe(
        `${path} uses store schema version ${SCHEMA_VERSION + 1}, newer than this strata reads (${SCHEMA_VERSION}). It was not changed; upgrade strata to open it.`,
      );
      expect(listing(dir), `${JSON.stringify(options)}: the file's bytes, and no -wal or -shm`).toEqual(before);
    }
  });
});
