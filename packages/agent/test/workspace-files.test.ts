/**
 * WS-1 … WS-4: the workspace record in the tree — reading it, checking it, writing file changes
 * as ops, and the diff of two records (which applied to the first gives the second).
 */
import { applyPatch, draft, skeletonTree, type Tree, toXml } from "@strata/dom";
import { DEFAULT_SKELETON, Session } from "@strata/engine";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  addSkippedDiags,
  applyFileChanges,
  DIAG_WORKSPACE_SKIPPED,
  diffWorkspaces,
  ensureWorkspace,
  type FileChange,
  type FileEntry,
  type WorkspaceStateError,
  workspaceDir,
  workspaceElement,
  workspaceFiles,
} from "../src/index.ts";
import { cleanup } from "./agent-kit.ts";
import { newSession } from "./workspace-kit.ts";

afterEach(cleanup);

const h = (n: number): string => n.toString(16).padStart(64, "0");
const entry = (path: string, n: number, mode: FileEntry["mode"] = "644"): FileEntry => ({ path, hash: h(n), mode, size: n });
const adds = (entries: readonly FileEntry[]): FileChange[] => entries.map((e) => ({ type: "add", entry: e }));
const plain = (t: Tree): FileEntry[] =>
  [...workspaceFiles(t).values()]
    .map(({ path, hash, mode, size }) => ({ path, hash, mode, size }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));

describe("WS-1 the record", () => {
  it("WS-1 before the baseline there is no <workspace>; changes create it under <meta>; dir and cap are attributes", () => {
    const { session } = newSession();
    expect(workspaceElement(session.tree)).toBeUndefined();
    expect(workspaceFiles(session.tree).size).toBe(0);
    session.commit((d) => {
      ensureWorkspace(d, { dir: "/w/main", cap: "100" });
      applyFileChanges(d, adds([entry("a", 1), entry("b/c", 2, "755"), entry("l", 3, "link")]));
    });
    const ws = workspaceElement(session.tree);
    expect(ws?.parent?.tag).toBe("meta");
    expect(workspaceDir(session.tree)).toBe("/w/main");
    expect(session.tree.get(ws?.id as number)?.children.map((c) => c.attrs)).toEqual([
      { hash: h(1), mode: "644", path: "a", size: "1" },
      { hash: h(2), mode: "755", path: "b/c", size: "2" },
      { hash: h(3), mode: "link", path: "l", size: "3" },
    ]);
  });

  it("WS-1 a reopened session reads the same record (it is in the log, L1)", () => {
    const { session, store } = newSession();
    session.commit((d) => applyFileChanges(d, adds([entry("a", 1), entry("z/y", 2)])), { label: "workspace.baseline" });
    const reopened = Session.open(store, session.id).session;
    expect(plain(reopened.tree)).toEqual(plain(session.tree));
  });

  it("WS-1 skipped files become <diag kind=workspace-skipped> with path, size and reason", () => {
    const { session } = newSession();
    session.commit((d) => {
      const ws = ensureWorkspace(d);
      addSkippedDiags(d, ws, [
        { path: "huge.bin", size: 1024 ** 3 },
        { path: "locked", size: 3, reason: "unreadable" },
      ]);
    });
    const diags = workspaceElement(session.tree)?.children.map((c) => c.attrs);
    expect(diags).toEqual([
      { kind: DIAG_WORKSPACE_SKIPPED, path: "huge.bin", reason: "too-large", size: String(1024 ** 3) },
      { kind: DIAG_WORKSPACE_SKIPPED, path: "locked", reason: "unreadable", size: "3" },
    ]);
    expect(workspaceFiles(session.tree).size).toBe(0);
  });
});

describe("WS-2 a record that was not written by strata is refused", () => {
  const cases: [string, Record<string, string>][] = [
    ["no path", { hash: h(1), mode: "644", size: "1" }],
    ["an escaping path", { path: "../x", hash: h(1), mode: "644", size: "1" }],
    ["a bad hash", { path: "x", hash: "abc", mode: "644", size: "1" }],
    ["a bad mode", { path: "x", hash: h(1), mode: "777", size: "1" }],
    ["a bad size", { path: "x", hash: h(1), mode: "644", size: "-1" }],
  ];
  for (const [what, attrs] of cases)
    it(`WS-2 a <file> with ${what} is bad-entry, naming the element`, () => {
      const { session } = newSession();
      let id = 0;
      session.commit((d) => {
        id = d.appendChild(ensureWorkspace(d), { tag: "file", attrs });
      });
      const err = (() => {
        try {
          workspaceFiles(session.tree);
        } catch (e) {
          return e;
        }
      })();
      expect((err as WorkspaceStateError).code).toBe("bad-entry");
      expect((err as Error).message).toContain(`element ${id}`);
    });

  it("WS-2 a path recorded twice is bad-entry", () => {
    const { session } = newSession();
    session.commit((d) => {
      const ws = ensureWorkspace(d);
      for (let i = 0; i < 2; i++) d.appendChild(ws, { tag: "file", attrs: { path: "x", hash: h(1), mode: "644", size: "1" } });
    });
    expect(() => workspaceFiles(session.tree)).toThrow(/recorded twice/);
  });
});

describe("WS-3 file changes are ops", () => {
  it("WS-3 a modify sets only what differs; a delete removes the element; a rename is a delete and an add", () => {
    const start = draft(skeletonTree(DEFAULT_SKELETON), (d) => applyFileChanges(d, adds([entry("a", 1), entry("b", 2)]))).tree;
    const files = workspaceFiles(start);
    const { tree, ops } = draft(start, (d) =>
      applyFileChanges(d, [
        { type: "modify", before: entry("a", 1), entry: { ...entry("a", 1), mode: "755" } },
        { type: "delete", before: entry("b", 2) },
        { type: "add", entry: entry("c", 2) },
      ]),
    );
    expect(ops.slice(0, 2)).toEqual([
      ["set", files.get("a")?.id, "mode", "755"],
      ["rm", files.get("b")?.id],
    ]);
    expect(ops[2]?.[0]).toBe("ins");
    expect(ops.length).toBe(3);
    expect(plain(tree)).toEqual([{ ...entry("a", 1), mode: "755" }, entry("c", 2)]);
  });

  it("WS-3 the recorded ops replay to the same tree (they are what the event persists, L3)", () => {
    const base = draft(skeletonTree(DEFAULT_SKELETON), (d) =>
      applyFileChanges(d, adds([entry("keep", 1), entry("mod", 2), entry("del", 3)])),
    ).tree;
    const many = Array.from({ length: 5000 }, (_, i) => entry(`n/${i}`, i + 10));
    const { tree, ops } = draft(base, (d) =>
      applyFileChanges(d, [
        ...adds(many),
        { type: "modify", before: entry("mod", 2), entry: entry("mod", 4) },
        { type: "delete", before: entry("del", 3) },
      ]),
    );
    expect(toXml(applyPatch(base, ops))).toBe(toXml(tree));
    expect(plain(tree).length).toBe(5002);
  });

  it("WS-3 a change that does not fit the tree is bad-change and applies nothing", () => {
    const { session } = newSession();
    session.commit((d) => applyFileChanges(d, adds([entry("a", 1)])));
    const bad: FileChange[][] = [
      [{ type: "add", entry: entry("a", 2) }],
      [{ type: "modify", before: entry("zz", 1), entry: entry("zz", 2) }],
      [{ type: "delete", before: entry("zz", 1) }],
      [
        { type: "add", entry: entry("ok", 1) },
        { type: "add", entry: entry("ok", 1) },
      ],
      [{ type: "add", entry: entry(".git/config", 1) }],
      [{ type: "add", entry: { path: "x", hash: "nope", mode: "644", size: 1 } }],
    ];
    for (const changes of bad) {
      let ops = -1;
      const err = (() => {
        try {
          session.commit((d) => {
            try {
              applyFileChanges(d, changes);
            } finally {
              ops = d.ops.length;
            }
          });
        } catch (e) {
          return e;
        }
      })();
      expect((err as WorkspaceStateError).code, JSON.stringify(changes)).toBe("bad-change");
      expect(ops).toBe(0);
    }
    expect(plain(session.tree)).toEqual([entry("a", 1)]);
  });
});

describe("WS-4 the diff of two records", () => {
  const recordArb = fc.dictionary(
    fc.constantFrom("a", "b", "c/d", "c/e", "f/g/h", "i"),
    fc.record({ n: fc.integer({ min: 1, max: 4 }), mode: fc.constantFrom<FileEntry["mode"]>("644", "755", "link") }),
  );

  it("WS-4 diffWorkspaces(a, b) is sorted by path, and applied to a gives b (property)", () => {
    fc.assert(
      fc.property(recordArb, recordArb, (ra, rb) => {
        const toEntries = (r: typeof ra): FileEntry[] => Object.entries(r).map(([p, v]) => ({ ...entry(p, v.n), mode: v.mode }));
        const skeleton = skeletonTree(DEFAULT_SKELETON);
        const a = draft(skeleton, (d) => applyFileChanges(d, adds(toEntries(ra)))).tree;
        const b = draft(skeleton, (d) => applyFileChanges(d, adds(toEntries(rb)))).tree;
        const diff = diffWorkspaces(a, b);
        const paths = diff.map((c) => (c.type === "delete" ? c.before.path : c.entry.path));
        expect(paths).toEqual([...paths].sort());
        const applied = draft(a, (d) => applyFileChanges(d, diff)).tree;
        expect(plain(applied)).toEqual(plain(b));
        expect(diffWorkspaces(applied, b)).toEqual([]);
      }),
      { numRuns: 200, seed: 4242 },
    );
  });

  it("WS-4 from no tree, every file is an add", () => {
    const { session } = newSession();
    session.commit((d) => applyFileChanges(d, adds([entry("b", 2), entry("a", 1)])));
    expect(diffWorkspaces(undefined, session.tree).map((c) => c.type === "add" && c.entry.path)).toEqual(["a", "b"]);
  });
});
