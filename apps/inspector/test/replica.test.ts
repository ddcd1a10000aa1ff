/**
 * IN-18 / EN-26 end to end: a writer process commits, streams, rewinds and moves branch `main`
 * onto other lines while three real SSE clients follow `main` through the real `strata serve`
 * process — the npm `eventsource` client, `eventsource-parser` and strata's `SseDecoder` — each
 * behind a TCP proxy that cuts its connections at random byte positions. Every client rebuilds
 * the state from the frames alone with a `Replica`; after every state frame it equals the host's
 * state at that event, and at the end its snapshot bytes are the host's canonical snapshot bytes.
 * The same test on a SQLite file and on PostgreSQL (`strata serve --db postgres://…`, woken by
 * LISTEN/NOTIFY when the writer process commits: decision 0038).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeId, toSnapshot } from "@strata/dom";
import { type Frame, loadTree, materialize, type Port, type Replica, Session } from "@strata/engine";
import { type EventId, isAsyncStore, openStore } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp, needsBuild } from "../src/index.ts";
import { CutProxy, eventSourceFollower, type Follower, ROOT, rawFollower, rng, type Served, strataServe } from "./sse-clients.ts";

const SEED = Number(process.env.STRATA_SEED ?? 11);
const STEPS = Number(process.env.STRATA_STEPS ?? 90);

/** Where the session lives: a SQLite file, or a fresh schema of the test run's PostgreSQL server. */
const PLACES = [
  { name: "SQLite", db: (dir: string) => join(dir, "s.db") },
  { name: "PostgreSQL", db: () => `${inject("pgUrl")}?schema=replica_${process.pid}_${Date.now().toString(36)}` },
];

describe.each(PLACES)("IN-18 a Replica follows strata serve's stream byte for byte ($name)", (place) => {
  let dir: string;
  let db: string;
  let store: Port;
  let served: Served;
  beforeAll(async () => {
    if (needsBuild()) await buildApp();
    dir = mkdtempSync(join(tmpdir(), "strata-replica-"));
    db = place.db(dir);
    store = /^postgres/.test(db) ? await openPgStore(db, { max: 2 }) : openStore(db);
    const s = await Session.create(store, { title: "replica test" });
    for (let i = 0; i < 5; i++) await s.commit([["ins", nodeId(3), null, { tag: "turn", text: `before ${i}` }]], { label: "turn.add" });
    await s.close();
    served = await strataServe(db);
  }, 120_000);
  afterAll(async () => {
    await served?.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function writer(session: string): Promise<{ head: EventId; moves: Record<string, number> }> {
    return new Promise((resolve, reject) => {
      const p = spawn(
        process.execPath,
        ["--import", "tsx", join(import.meta.dirname, "stream-writer.ts"), db, session, String(STEPS), String(SEED)],
        {
          cwd: ROOT,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let out = "";
      let err = "";
      p.stdout.on("data", (c) => {
        out += c;
      });
      p.stderr.on("data", (c) => {
        err += c;
      });
      p.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`writer exited ${code}:\n${err}`))));
    });
  }

  const bytesAt = async (event: EventId): Promise<string> =>
    toSnapshot(isAsyncStore(store) ? await loadTree(await materialize(store, event)) : materialize(store, event));

  it("through cuts mid-frame, Last-Event-ID reconnects, rewinds and branch moves, with eventsource, eventsource-parser and SseDecoder", async () => {
    const session = (await store.listSessions())[0]?.id as string;
    const random = rng(SEED);
    const target = Number(new URL(served.url).port);
    const proxies = [
      new CutProxy(target, 6, 12_000, random),
      new CutProxy(target, 12, 12_000, random),
      new CutProxy(target, 12, 12_000, random),
    ];
    const urls = await Promise.all(proxies.map((p) => p.listen()));
    const path = `api/sessions/${session}/stream?branch=main&snapshot=1`;
    // After every state frame and every event the replica must be the host's state at that event
    // (kept here, compared once the run is over: the host's state is read from the store).
    const seenStates: { type: string; at: EventId; bytes: string }[] = [];
    const check = (f: Frame, r: Replica): void => {
      const at = f.type === "snapshot" || f.type === "reset" ? f.event : f.type === "event" ? f.id : undefined;
      if (at !== undefined) seenStates.push({ type: f.type, at, bytes: toSnapshot(r.tree) });
    };
    const followers: Follower[] = [
      eventSourceFollower(new URL(path, urls[0]).href, check),
      rawFollower(new URL(path, urls[1]).href, "eventsource-parser", check),
      rawFollower(new URL(path, urls[2]).href, "strata", check),
    ];
    try {
      const { head, moves } = await writer(session);
      expect(moves.rewind).toBeGreaterThan(0);
      expect(moves.moveOnto).toBeGreaterThan(0);
      expect(moves.switchAway).toBeGreaterThan(0);
      expect((await store.branch(session as never, "main"))?.head).toBe(head);
      const deadline = Date.now() + 60_000;
      while (followers.some((f) => f.replica.event !== head) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const seen = JSON.stringify({
        moves,
        cuts: proxies.map((p) => ({ cuts: p.cutsDone, midFrame: p.midFrame, resumed: p.resumed })),
        followers: followers.map((f) => ({ name: f.name, connections: f.connections, frames: f.frames.length })),
      });
      const want = await bytesAt(head);
      for (const f of followers) {
        expect({ name: f.name, errors: f.errors }).toEqual({ name: f.name, errors: [] });
        expect(f.replica.event, `${f.name} (${seen})`).toBe(head);
        expect(toSnapshot(f.replica.tree) === want, `${f.name}: replica bytes == host canonical snapshot bytes`).toBe(true);
        expect(f.frames.filter((x) => x.type === "reset").length, `${f.name} saw resets`).toBeGreaterThan(0);
        expect(f.connections, `${f.name} reconnected`).toBeGreaterThan(3);
      }
      const host = new Map<EventId, string>();
      const mismatches: string[] = [];
      for (const { type, at, bytes } of seenStates) {
        if (!host.has(at)) host.set(at, await bytesAt(at));
        if (bytes !== host.get(at)) mismatches.push(`${type} ${at}`);
      }
      expect(seenStates.length).toBeGreaterThan(STEPS);
      expect(mismatches).toEqual([]);
      for (const p of proxies) {
        expect(p.cutsDone, seen).toBeGreaterThan(3);
        expect(p.midFrame, seen).toBeGreaterThan(0);
        expect(p.resumed, seen).toBeGreaterThan(0);
      }
      expect(served.proc.exitCode).toBe(null);
    } finally {
      for (const f of followers) f.close();
      await Promise.all(proxies.map((p) => p.close()));
    }
  }, 180_000);
});
