/**
 * L6 and the article's Appendix A catalogue: each way Pi's official extensions lose state, written
 * the way an extension author would naturally write it with strata — state in the tree, read by
 * selectors from the selected branch. None needs a rewind, fork or resume hook.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodeId, nodeId, type TreeDraft } from "@strata/dom";
import { openStore, type Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../src/index.ts";

const n = nodeId;
const META = n(2);
const BODY = n(3);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function db(): { store: Store; reopen: () => Store } {
  const dir = mkdtempSync(join(tmpdir(), "strata-appendix-"));
  dirs.push(dir);
  const path = join(dir, "a.db");
  return { store: openStore(path), reopen: () => openStore(path) };
}

/** A turn with an assistant reply, the way the agent loop records one. */
function turnWith(s: Session, reply: string): void {
  s.commit(
    (d) => {
      const t = d.appendChild(BODY, { tag: "turn" });
      d.appendChild(t, { tag: "assistant", text: reply });
    },
    { label: "turn" },
  );
}

/** Finds or creates `<meta><name/></meta>` inside a draft. */
function metaChild(d: TreeDraft, tag: string): NodeId {
  return d.selectOne(`:root > meta > ${tag}`)?.id ?? d.appendChild(META, { tag });
}

describe("Appendix A, the strata way", () => {
  it("tic-tac-toe: a move written, then a crash before the reply — the move survives reopen", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    s.commit((d) => d.appendChild(metaChild(d, "game"), { tag: "move", attrs: { player: "X", cell: "4" } }), { label: "game.move" });
    // The process dies here: no close, no reply.
    const { session: resumed } = Session.open(reopen(), s.id);
    expect(resumed.select("game move").map((m) => `${m.attrs.player}${m.attrs.cell}`)).toEqual(["X4"]);
  });

  it("status line: a turn counter after rewind-to-turn-1 and one new turn reads 2 (and after reopen)", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    turnWith(s, "1");
    const afterTurn1 = s.head.id;
    turnWith(s, "2");
    turnWith(s, "3");
    const turns = (x: Session) => x.count("body > turn");
    expect(turns(s)).toBe(3);
    s.rewind(afterTurn1);
    turnWith(s, "2'");
    expect(turns(s)).toBe(2);
    expect(turns(Session.open(reopen(), s.id).session)).toBe(2);
  });

  it("dynamic tools: a roster changed on one branch is not active on another, nor after reopening either", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    s.commit((d) => d.appendChild(metaChild(d, "tools"), { tag: "tool", attrs: { name: "read" } }));
    const base = s.head.id;
    const side = s.fork(base, { name: "with-calculator" });
    side.commit((d) => d.appendChild(metaChild(d, "tools"), { tag: "tool", attrs: { name: "calculator" } }));
    const active = (x: Session) => x.select("meta > tools > tool").map((t) => t.attrs.name);
    expect(active(side)).toEqual(["read", "calculator"]);
    expect(active(s)).toEqual(["read"]);
    const again = reopen();
    expect(active(Session.open(again, s.id).session)).toEqual(["read"]);
    expect(active(Session.open(again, s.id, { branch: "with-calculator" }).session)).toEqual(["read", "calculator"]);
  });

  it("deferred tools: a tool activated after discovery is inactive after rewinding to before the discovery", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    turnWith(s, "searching tools");
    const beforeDiscovery = s.head.id;
    s.commit((d) => d.appendChild(metaChild(d, "tools"), { tag: "tool", attrs: { name: "Calculator", via: "tool_search" } }), {
      label: "tools.activate",
    });
    expect(s.count("tool[name=Calculator]")).toBe(1);
    s.rewind(beforeDiscovery);
    expect(s.count("tool[name=Calculator]")).toBe(0);
    expect(Session.open(reopen(), s.id).session.count("tool[name=Calculator]")).toBe(0);
  });

  it("plan mode: a mode element created after the rewind target is gone after rewind and still gone after reopen", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    turnWith(s, "hi");
    const target = s.head.id;
    s.commit((d) => d.appendChild(metaChild(d, "directors"), { tag: "plan", attrs: { readonly: "true" } }), { label: "plan.enter" });
    expect(s.count("directors plan")).toBe(1);
    s.rewind(target);
    expect(s.count("directors plan")).toBe(0);
    expect(Session.open(reopen(), s.id).session.count("directors plan")).toBe(0);
  });

  it("snake: a save made on an abandoned branch never comes back", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    s.commit((d) => d.appendChild(metaChild(d, "saves"), { tag: "save", attrs: { game: "snake", score: "10" } }));
    const kept = s.head.id;
    s.commit((d) => d.appendChild(metaChild(d, "saves"), { tag: "save", attrs: { game: "snake", score: "99" } }));
    s.rewind(kept);
    turnWith(s, "playing on");
    const lastSave = (x: Session) => x.select("saves save[game=snake]").at(-1)?.attrs.score;
    expect(lastSave(s)).toBe("10");
    expect(lastSave(Session.open(reopen(), s.id).session)).toBe("10");
    // The abandoned save is still in the log, on its own branch, and nowhere else.
    const abandoned = s.branches().find((b) => b.origin === "rewind");
    expect(abandoned).toBeDefined();
  });

  it("bookmark: the last assistant message is the last one on the selected branch, also after reopen", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    turnWith(s, "first");
    const target = s.head.id;
    turnWith(s, "abandoned, written later");
    s.rewind(target);
    const last = (x: Session) => x.select("body > turn > assistant").at(-1)?.text;
    expect(last(s)).toBe("first");
    expect(last(Session.open(reopen(), s.id).session)).toBe("first");
  });

  it("git checkpoint: a checkpoint recorded in the tree is found by an idle fork and after resume", () => {
    const { store, reopen } = db();
    const s = Session.create(store);
    turnWith(s, "edit files");
    s.commit((d) => d.appendChild(metaChild(d, "checkpoints"), { tag: "checkpoint", attrs: { ref: "stash@{0}", turn: "1" } }));
    const at = s.head.id;
    turnWith(s, "more work");
    const fork = s.fork(at);
    expect(fork.selectOne("checkpoint")?.attrs.ref).toBe("stash@{0}");
    expect(Session.open(reopen(), s.id, { branch: fork.branch }).session.selectOne("checkpoint")?.attrs.ref).toBe("stash@{0}");
  });

  it("auto-commit on exit: a process exit and a session switch are distinct recorded transitions", () => {
    const { store, reopen } = db();
    const a = Session.create(store);
    turnWith(a, "work");
    a.close({ reason: "switch" });
    const { session: again } = Session.open(reopen(), a.id);
    const shouldCommitOnExit = (x: Session) => x.count("meta > transitions > transition[kind=exit]") > 0;
    expect(again.select("meta > transitions > transition").map((t) => t.attrs.kind)).toEqual(["switch"]);
    expect(shouldCommitOnExit(again)).toBe(false);
    again.close({ reason: "exit" });
    const { session: last } = Session.open(reopen(), a.id);
    expect(last.select("transition").map((t) => t.attrs.kind)).toEqual(["switch", "exit"]);
    expect(shouldCommitOnExit(last)).toBe(true);
    expect(
      last
        .log()
        .map((e) => e.label)
        .slice(-2),
    ).toEqual(["session.switch", "session.exit"]);
  });
});
