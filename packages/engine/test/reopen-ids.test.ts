/**
 * EN-17, L5 (issue 11 item 30): ids come from the line's own state. Two store handles on one file
 * (two processes' worth of id pools), several Session objects per handle, head conflicts and
 * reopen cycles, forks and rewinds: every commit either succeeds or gets a `HeadConflict` — never
 * "high-water mark only rises" — and no id ever names two elements across the session's branches.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodeId, nodeId } from "@strata/dom";
import { type EventId, HeadConflict, openStore, type Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError, materialize, Session, verifyStore } from "../src/index.ts";

const BODY = nodeId(3);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A small deterministic generator (mulberry32), so a failing seed replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** L5 over every branch head: an id two heads both hold names the same element (shared history). */
function idClashes(store: Store, session: Session): string[] {
  const seen = new Map<number, string>();
  const clashes: string[] = [];
  for (const b of store.branches(session.id)) {
    const t = materialize(store, b.head);
    for (let id = 256; id <= t.hwm; id++) {
      const r = t.get(id);
      if (r === undefined) continue;
      const what = `${r.tag}:${r.attr("w") ?? ""}:${r.attr("i") ?? ""}`;
      const before = seen.get(id);
      if (before === undefined) seen.set(id, what);
      else if (before !== what) clashes.push(`${id} is ${before} and ${what}`);
    }
  }
  return clashes;
}

describe("EN-17 ids after conflicts and reopens (issue 11 item 30)", () => {
  it("two handles, four writers, conflicts, reopens, forks and rewinds: no commit fails for its ids; L5 holds", () => {
    for (const seed of [1, 2, 3, 4]) {
      const dir = mkdtempSync(join(tmpdir(), "strata-reopen-ids-"));
      dirs.push(dir);
      const path = join(dir, "s.db");
      const handles = [openStore(path), openStore(path)];
      const first = Session.create(handles[0] as Store);
      const random = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
      // Writers: [handle, session]; each follows a branch and reopens after a conflict.
      const writers: { h: Store; s: Session }[] = [
        { h: handles[0] as Store, s: first },
        { h: handles[1] as Store, s: Session.open(handles[1] as Store, first.id).session },
        { h: handles[0] as Store, s: Session.open(handles[0] as Store, first.id).session },
        { h: handles[1] as Store, s: Session.open(handles[1] as Store, first.id).session },
      ];
      const failures: string[] = [];
      let conflicts = 0;
      for (let step = 0; step < 400; step++) {
        const w = pick(writers);
        const wi = writers.indexOf(w);
        const r = random();
        try {
          if (r < 0.04) {
            // Fork a new branch from an event of this line, through this writer's handle.
            const log = w.s.log();
            w.s = w.s.fork((pick(log) as { id: EventId }).id);
          } else if (r < 0.07) {
            const log = w.s.log();
            w.s.rewind((pick(log) as { id: EventId }).id);
          } else if (r < 0.12) {
            // Reopen any branch through either handle (another process taking over a line).
            w.h = pick(handles);
            w.s = Session.open(w.h, w.s.id, { branch: pick(w.s.branches()).name }).session;
          } else {
            // Mostly small commits; now and then one that needs a range of its own.
            const count = random() < 0.1 ? 200 + Math.floor(random() * 700) : 1 + Math.floor(random() * 30);
            w.s.commit((d) => {
              const t = d.appendChild(BODY, { tag: "turn", attrs: { w: String(wi), i: String(step) } });
              for (let k = 1; k < count; k++) d.appendChild(t, { tag: "c", attrs: { w: String(wi), i: String(step) } });
            });
          }
        } catch (e) {
          // A stale writer meets a moved head: a conflict, or (rewinding) a target no longer on its branch.
          if (e instanceof HeadConflict || (e instanceof EngineError && e.code === "not-found")) {
            conflicts++;
            w.s = Session.open(w.h, w.s.id, { branch: w.s.branch }).session;
          } else failures.push(`seed ${seed} step ${step}: ${(e as Error).message}`);
        }
      }
      expect(failures).toEqual([]);
      expect(conflicts).toBeGreaterThan(10);
      expect(idClashes(handles[0] as Store, first)).toEqual([]);
      expect(verifyStore(handles[0] as Store).ok).toBe(true);
      for (const h of handles) h.close();
    }
  }, 120_000);

  it("a line reopened through a handle whose pool holds lower ids mints above its mark", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-reopen-ids-"));
    dirs.push(dir);
    const path = join(dir, "s.db");
    const h1 = openStore(path);
    const h2 = openStore(path);
    const a = Session.create(h1);
    // h1's pool gets block 1 and hands a first range of it to a fork.
    const f = a.fork(a.head.id, { name: "f" });
    f.commit((d) => void d.appendChild(BODY, { tag: "fx" }));
    // main grows past block 1 through h2 (which reserves its own, later block)...
    const b = Session.open(h2, a.id).session;
    b.commit((d) => {
      for (let k = 0; k < 4200; k++) d.appendChild(BODY, { tag: "x" });
    });
    const mark = b.durableTree.hwm;
    // ...and is reopened through h1: its next range must come from above the mark.
    const again = Session.open(h1, a.id).session;
    let id = 0 as NodeId;
    again.commit((d) => {
      for (let k = 0; k < 300; k++) id = d.appendChild(BODY, { tag: "y" });
    });
    expect(id).toBeGreaterThan(mark);
    expect(idClashes(h1, a)).toEqual([]);
  });

  it("a kept rewound head reopened elsewhere never mints the ids its line handed to the rewound branch", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-reopen-ids-"));
    dirs.push(dir);
    const path = join(dir, "s.db");
    const s = Session.create(openStore(path));
    s.commit((d) => void d.appendChild(BODY, { tag: "turn", attrs: { w: "base" } }));
    const base = s.head.id;
    s.commit((d) => void d.appendChild(BODY, { tag: "turn", attrs: { w: "abandoned" } }));
    // The rewind hands the rest of main's ids to main's new line, which mints there at once.
    s.rewind(base);
    s.commit((d) => void d.appendChild(BODY, { tag: "turn", attrs: { w: "main again" } }));
    // Another process resumes the kept head and writes on it.
    const kept = s.branches().find((b) => b.origin === "rewind")?.name;
    const other = openStore(path);
    const k = Session.open(other, s.id, { branch: kept }).session;
    k.commit((d) => void d.appendChild(BODY, { tag: "turn", attrs: { w: "kept, resumed" } }));
    s.commit((d) => void d.appendChild(BODY, { tag: "turn", attrs: { w: "main, later" } }));
    expect(idClashes(other, s)).toEqual([]);
    expect(verifyStore(other).ok).toBe(true);
  });
});
