/** CLI-23: bundles import with history intact, never reuse node ids (L5), and fail atomically. */
import { nodeId, walkTree } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore, type Store } from "@strata/store";
import { describe, expect, it } from "vitest";
import { buildBundle, importBundle } from "../src/commands/bundle.ts";

function ids(store: Store, session: string, branch: string): Set<number> {
  const s = Session.open(store, session as never, { branch }).session;
  const out = new Set<number>();
  walkTree(s.tree, s.tree.rootId, (r) => void out.add(r.id));
  return out;
}

describe("CLI-23 bundles", () => {
  it("a rewound session imports with every branch starting a new line: no node id is ever minted twice", () => {
    const src = openStore(":memory:");
    const s = Session.create(src);
    const a = s.commit([["ins", nodeId(3), null, { tag: "a" }]]);
    for (let i = 0; i < 5; i++) s.commit([["ins", nodeId(3), null, { tag: "old" }]]);
    s.rewind(a.id);
    const bundle = buildBundle(src, s.id);
    const dst = openStore(":memory:");
    const r = importBundle(dst, bundle);
    const imported = Session.open(dst, r.session, { branch: "main" }).session;
    const kept = dst.branches(r.session).find((b) => b.name.startsWith("rewound/"))?.name as string;
    expect(kept).toBeDefined();
    const keptIds = ids(dst, r.session, kept);
    imported.commit([["ins", nodeId(3), null, { tag: "new", children: [{ tag: "x" }, { tag: "y" }] }]]);
    const fresh = imported.select("new, new *").map((e) => e.id);
    for (const id of fresh) expect(keptIds.has(id), `id ${id} is already used on ${kept}`).toBe(false);
    // and the same holds for a commit on the kept branch
    const other = Session.open(dst, r.session, { branch: kept }).session;
    other.commit([["ins", nodeId(3), null, { tag: "z" }]]);
    const z = other.selectOne("z")?.id as number;
    expect(ids(dst, r.session, "main").has(z)).toBe(false);
  });

  it("a damaged bundle fails and leaves the database exactly as it was", () => {
    const src = openStore(":memory:");
    const s = Session.create(src, { title: "t" });
    s.commit([["ins", nodeId(3), null, { tag: "a", text: "hello" }]]);
    const bundle = buildBundle(src, s.id);
    const dst = openStore(":memory:");
    const tampered = { ...bundle, heads: { ...bundle.heads, main: bundle.heads.main?.replace("hello", "bye") as string } };
    expect(() => importBundle(dst, tampered)).toThrow(
      /replays to a different tree than the bundle's XML; the bundle is damaged \(nothing was imported\)/,
    );
    expect(dst.listSessions()).toEqual([]);
    const badOps = { ...bundle, events: bundle.events.map((e, i) => (i === 1 ? { ...e, data: '{"ops":[["rm",999999]]}' } : e)) };
    expect(() => importBundle(dst, badOps)).toThrow();
    expect(dst.listSessions()).toEqual([]);
    expect(importBundle(dst, bundle).branches).toBe(1);
    expect(dst.listSessions()).toHaveLength(1);
  });
});
