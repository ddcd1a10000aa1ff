/**
 * IN-18 / EN-26 end to end: a writer process commits, streams, rewinds and moves branch `main`
 * onto other lines while three real SSE clients follow `main` through the real `strata serve`
 * process — the npm `eventsource` client, `eventsource-parser` and strata's `SseDecoder` — each
 * behind a TCP proxy that cuts its connections at random byte positions. Every client rebuilds
 * the state from the frames alone with a `Replica`; after every state frame it equals the host's
 * state at that event, and at the end its snapshot bytes are the host's canonical snapshot bytes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeId, toSnapshot } from "@strata/dom";
import { type Frame, materialize, type Replica, Session } from "@strata/engine";
import { type EventId, openStore, type Store } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, needsBuild } from "../src/index.ts";
import { CutProxy, eventSourceFollower, type Follower, ROOT, rawFollower, rng, type Served, strataServe } from "./sse-clients.ts";

const SEED = Number(process.env.STRATA_SEED ?? 11);
const STEPS = Number(process.env.STRATA_STEPS ?? 90);

let dir: string;
let db: string;
let store: Store;
let served: Served;
beforeAll(async () => {
  if (needsBuild()) await buildApp();
  dir = mkdtempSync(join(tmpdir(), "strata-replica-"));
  db = join(dir, "s.db");
  store = openStore(db);
  const s = Session.create(store, { title: "replica test" });
  for (let i = 0; i < 5; i++) s.commit([["ins", nodeId(3), null, { tag: "turn", text: `before ${i}` }]], { label: "turn.add" });
  s.close();
  served = await strataServe(db);
}, 120_000);
afterAll(async () => {
  await served?.stop();
  store?.close();
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

const bytesAt = (event: EventId): string => toSnapshot(materialize(store, event));

describe("IN-18 a Replica follows strata serve's stream byte for byte", () => {
  it("through cuts mid-frame, Last-Event-ID reconnects, rewinds and branch moves, with eventsource, eventsource-parser and SseDecoder", async () => {
    const session = store.listSessions()[0]?.id as string;
    const random = rng(SEED);
    const target = Number(new URL(served.url).port);
    const proxies = [
      new CutProxy(target, 6, 12_000, random),
      new CutProxy(target, 12, 12_000, random),
      new CutProxy(target, 12, 12_000, random),
    ];
    const urls = await Promise.all(proxies.map((p) => p.listen()));
    const path = `api/sessions/${session}/stream?branch=main&snapshot=1`;
    const mismatches: string[] = [];
    // After every state frame and every event the replica must be the host's state at that event.
    const check = (f: Frame, r: Replica): void => {
      const at = f.type === "snapshot" || f.type === "reset" ? f.event : f.type === "event" ? f.id : undefined;
      if (at !== undefined && toSnapshot(r.tree) !== bytesAt(at)) mismatches.push(`${f.type} ${at}`);
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
      expect(store.branch(session as never, "main")?.head).toBe(head);
      const deadline = Date.now() + 60_000;
      while (followers.some((f) => f.replica.event !== head) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const seen = JSON.stringify({
        moves,
        cuts: proxies.map((p) => ({ cuts: p.cutsDone, midFrame: p.midFrame, resumed: p.resumed })),
        followers: followers.map((f) => ({ name: f.name, connections: f.connections, frames: f.frames.length })),
      });
      const want = bytesAt(head);
      for (const f of followers) {
        expect({ name: f.name, errors: f.errors }).toEqual({ name: f.name, errors: [] });
        expect(f.replica.event, `${f.name} (${seen})`).toBe(head);
        expect(toSnapshot(f.replica.tree) === want, `${f.name}: replica bytes == host canonical snapshot bytes`).toBe(true);
        expect(f.frames.filter((x) => x.type === "reset").length, `${f.name} saw resets`).toBeGreaterThan(0);
        expect(f.connections, `${f.name} reconnected`).toBeGreaterThan(3);
      }
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
