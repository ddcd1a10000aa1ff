/**
 * Every op kind through the shared law helper, and every error code it can raise (docs/spec/dom.md).
 */
import { describe, expect, it } from "vitest";
import {
  applyPatch,
  DomError,
  emptyTree,
  invertPatch,
  MAX_HWM_RAISE,
  MAX_NODE_ID,
  type NodeId,
  nodeId,
  type Op,
  parseXml,
  sanitizeText,
  skeletonTree,
  toSnapshot,
  toXml,
  tryApplyPatch,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkLaws, checkRejected } from "./laws.ts";

const n = nodeId;
const base = () =>
  applyPatch(skeletonTree(SKELETON), [
    [
      "ins",
      n(2),
      null,
      {
        tag: "todo",
        children: [
          { tag: "item", attrs: { status: "pending" }, text: "a" },
          { tag: "item", text: "b" },
        ],
      },
    ],
    ["ins", n(3), null, { tag: "turn", attrs: { n: "1" } }],
  ]);
// ids: session 1, meta 2, body 3, todo 4, item 5, item 6, turn 7

describe("DOM-1/2 ids", () => {
  it("mints ids from the high-water mark in document order, never supplied by callers", () => {
    const t = checkLaws(base(), [
      [
        "ins",
        n(7),
        null,
        {
          tag: "user",
          children: [
            { tag: "p", text: "x" },
            { tag: "p", text: "y" },
          ],
        },
      ],
      ["ins", n(7), n(8), { tag: "assistant" }],
    ]);
    expect(t.hwm).toBe(11);
    expect(t.childIds(7)).toEqual([8, 11]);
    expect(t.childIds(8)).toEqual([9, 10]);
  });

  it("never re-mints an id after removal: the high-water mark survives rm", () => {
    const t = checkLaws(base(), [
      ["rm", n(7)],
      ["ins", n(3), null, { tag: "turn" }],
    ]);
    expect(t.has(7)).toBe(false);
    expect(t.childIds(3)).toEqual([8]);
    expect(t.hwm).toBe(8);
  });
});

describe("DOM-9 ins", () => {
  it("inserts first, after a sibling, and at the end", () => {
    checkLaws(base(), [["ins", n(4), null, { tag: "item", text: "first" }]], {
      readable:
        '<session><meta><todo><item>first</item><item status="pending">a</item><item>b</item></todo></meta><body><turn n="1"/></body></session>',
    });
    checkLaws(base(), [["ins", n(4), n(5), { tag: "item", text: "mid" }]]);
    checkLaws(base(), [["ins", n(4), n(6), { tag: "item", attrs: { z: "1", a: "2" } }]]);
  });

  it("rejects an unknown parent, a foreign anchor, and a parent holding text", () => {
    checkRejected(base(), [["ins", 99, null, { tag: "x" }]], "unknown-node", 0);
    checkRejected(
      base(),
      [
        ["set", 4, "k", "v"],
        ["ins", 4, 7, { tag: "x" }],
      ],
      "bad-anchor",
      1,
    );
    checkRejected(base(), [["ins", 4, 99, { tag: "x" }]], "bad-anchor", 0);
    checkRejected(base(), [["ins", 5, null, { tag: "x" }]], "mixed-content", 0);
  });

  it("rejects a spec with text and children, bad names, bad text, mixed explicit ids", () => {
    checkRejected(base(), [["ins", 3, null, { tag: "x", text: "t", children: [{ tag: "y" }] }]], "mixed-content", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "1x" }]], "bad-name", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "x", attrs: { _id: "5" } }]], "bad-name", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "x", text: "\u0000" }]], "bad-text", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "x", id: 50, children: [{ tag: "y" }] }]], "bad-op", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "x", extra: 1 }]], "bad-op", 0);
  });

  it("restore form: explicit ids bring back absent ids and raise the mark; live or repeated ids are refused", () => {
    const t = checkLaws(base(), [["ins", n(3), null, { tag: "x", id: n(40), children: [{ tag: "y", id: n(41) }] }]]);
    expect(t.hwm).toBe(41);
    checkRejected(base(), [["ins", 3, null, { tag: "x", id: 5 }]], "bad-id", 0);
    checkRejected(base(), [["ins", 3, null, { tag: "x", id: 9, children: [{ tag: "y", id: 9 }] }]], "bad-id", 0);
    const r = tryApplyPatch(base(), [["ins", n(3), null, { tag: "x", id: n(40) }]], { monotonic: true });
    expect(!r.ok && r.error.code).toBe("bad-id");
  });
});

describe("DOM-10 rm", () => {
  it("removes a subtree and relinks its siblings", () => {
    const t = checkLaws(base(), [["rm", n(5)]]);
    expect(t.childIds(4)).toEqual([6]);
    expect(t.has(5)).toBe(false);
    expect(checkLaws(base(), [["rm", n(4)]]).size).toBe(4);
  });

  it("refuses fixed skeleton elements and unknown ids", () => {
    for (const id of [1, 2, 3]) checkRejected(base(), [["rm", id]], "fixed-node", 0);
    checkRejected(base(), [["rm", 99]], "unknown-node", 0);
    checkRejected(
      base(),
      [
        ["rm", 5],
        ["rm", 5],
      ],
      "unknown-node",
      1,
    );
  });
});

describe("DOM-11 set", () => {
  it("sets, replaces and removes attributes, keeping canonical order", () => {
    const t = checkLaws(base(), [
      ["set", n(5), "b", "2"],
      ["set", n(5), "a", "1"],
      ["set", n(5), "status", "completed"],
      ["set", n(6), "status", null],
      ["set", n(7), "n", null],
    ]);
    expect(Object.keys(t.get(5)?.attrs ?? {})).toEqual(["a", "b", "status"]);
    expect(toXml(t, { root: 5, ids: false })).toBe('<item a="1" b="2" status="completed">a</item>');
    expect(t.get(7)?.attrs).toEqual({});
  });

  it("is a no-op (same version) when nothing changes", () => {
    const b = base();
    expect(applyPatch(b, [["set", n(5), "status", "pending"]])).toBe(b);
    expect(applyPatch(b, [["set", n(6), "missing", null]])).toBe(b);
  });

  it("sets fixed elements' attributes and the document's high-water mark", () => {
    const t = checkLaws(base(), [
      ["set", n(1), "title", "demo"],
      ["set", 0, "hwm", "100"],
      ["ins", n(3), null, { tag: "turn" }],
    ]);
    expect(t.childIds(3)[0]).toBe(101);
  });

  it("refuses bad names, bad values, unknown ids, and lowering the mark below a live id", () => {
    checkRejected(base(), [["set", 5, "__proto__", "x"]], "bad-name", 0);
    checkRejected(base(), [["set", 5, "xmlns", "x"]], "bad-name", 0);
    checkRejected(base(), [["set", 5, "k", "\uD800"]], "bad-text", 0);
    checkRejected(base(), [["set", 99, "k", "v"]], "unknown-node", 0);
    checkRejected(base(), [["set", 0, "hwm", "6"]], "bad-hwm", 0);
    checkRejected(base(), [["set", 0, "other", "6"]], "bad-op", 0);
    checkRejected(base(), [["set", 0, "hwm", "007"]], "bad-op", 0);
    const r = tryApplyPatch(base(), [["set", 0, "hwm", "7"]], { monotonic: true });
    expect(r.ok).toBe(true);
    const lowered = tryApplyPatch(applyPatch(base(), [["set", 0, "hwm", "9"]]), [["set", 0, "hwm", "8"]], { monotonic: true });
    expect(!lowered.ok && lowered.error.code).toBe("bad-hwm");
  });
});

describe("DOM-12 mv", () => {
  it("moves within a parent, across parents, to the front and the back", () => {
    checkLaws(base(), [["mv", n(5), n(4), n(6)]]);
    checkLaws(base(), [["mv", n(6), n(4), null]]);
    checkLaws(base(), [["mv", n(4), n(7), null]]);
    checkLaws(base(), [["mv", n(5), n(4), null]]); // already there: no-op
    const t = checkLaws(base(), [["mv", n(7), n(2), n(4)]]);
    expect(t.childIds(2)).toEqual([4, 7]);
    expect(t.childIds(3)).toEqual([]);
  });

  it("refuses cycles, self-anchors, foreign anchors, fixed elements and parents with text", () => {
    checkRejected(base(), [["mv", 4, 4, null]], "cycle", 0);
    checkRejected(base(), [["ins", 6, null, { tag: "x" }]], "mixed-content", 0);
    checkRejected(
      base(),
      [
        ["text", 6, ""],
        ["ins", 6, null, { tag: "x" }],
        ["mv", 4, 8, null],
      ],
      "cycle",
      2,
    );
    checkRejected(base(), [["mv", 5, 4, 5]], "bad-anchor", 0);
    checkRejected(base(), [["mv", 5, 4, 7]], "bad-anchor", 0);
    checkRejected(base(), [["mv", 2, 3, null]], "fixed-node", 0);
    checkRejected(base(), [["mv", 7, 5, null]], "mixed-content", 0);
    checkRejected(base(), [["mv", 99, 4, null]], "unknown-node", 0);
    checkRejected(base(), [["mv", 5, 99, null]], "unknown-node", 0);
  });
});

describe("DOM-13 text and append", () => {
  it("replaces and appends text, including every character that needs escaping", () => {
    const t = checkLaws(base(), [
      ["text", n(5), "<a> & \"b\" 'c'\r\n\t]]>"],
      ["append", n(5), " 😀𝄞"],
      ["text", n(6), ""],
      ["append", n(7), "streamed"],
      ["append", n(7), " more"],
    ]);
    expect(t.get(5)?.text).toBe("<a> & \"b\" 'c'\r\n\t]]> 😀𝄞");
    expect(t.get(7)?.text).toBe("streamed more");
  });

  it("refuses text on an element with children, and characters XML cannot carry", () => {
    checkRejected(base(), [["text", 4, "x"]], "mixed-content", 0);
    checkRejected(base(), [["append", 4, "x"]], "mixed-content", 0);
    checkRejected(base(), [["append", 5, "\u001b[31m"]], "bad-text", 0);
    checkRejected(base(), [["text", 5, "\uFFFE"]], "bad-text", 0);
  });
});

describe("DOM-7 patches", () => {
  it("apply all or nothing: a failing op anywhere leaves the input untouched and names its index", () => {
    checkRejected(
      base(),
      [
        ["set", 5, "a", "1"],
        ["rm", 6],
        ["text", 6, "x"],
      ],
      "unknown-node",
      2,
    );
  });

  it("an empty patch returns the same version", () => {
    const b = base();
    expect(applyPatch(b, [])).toBe(b);
    checkLaws(b, []);
  });

  it("errors are DomError with a closed code and a message that says what, where and how", () => {
    try {
      applyPatch(base(), [
        ["set", n(5), "a", "1"],
        ["ins", n(5), null, { tag: "x" }],
      ]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DomError);
      const err = e as DomError;
      expect(err.code).toBe("mixed-content");
      expect(err.opIndex).toBe(1);
      expect(err.message).toBe('op 1: element 5 <item> has text, so it cannot also have child elements (clear it with a "text" op first)');
    }
  });

  it("DOM-3: emptyTree and skeletonTree fix their elements; the root can hold text or children", () => {
    const e = emptyTree("root");
    expect(toXml(e)).toBe('<?strata hwm="1" fixed="1"?><root _id="1"/>');
    checkLaws(e, [["text", n(1), "hello"]]);
    checkRejected(e, [["rm", 1]], "fixed-node", 0);
    expect(() => emptyTree("1x")).toThrow(DomError);
    const s = skeletonTree({
      tag: "session",
      attrs: { v: "1" },
      children: [{ tag: "meta", children: [{ tag: "todo" }] }, { tag: "body" }],
    });
    expect(s.fixed).toEqual([1, 2, 3, 4]);
    expect(toXml(s, { ids: false })).toBe('<session v="1"><meta><todo/></meta><body/></session>');
    checkRejected(s, [["mv", 3, 4, null]], "fixed-node", 0);
  });

  it("applies long patches built op by op (1,000 inserts) the same as one by one", () => {
    let one = base();
    const ops: Op[] = [];
    let after: NodeId | null = null;
    for (let i = 0; i < 1000; i++) {
      const op: Op = ["ins", n(3), after, { tag: "turn", attrs: { n: String(i) } }];
      ops.push(op);
      after = n(one.hwm + 1);
      one = applyPatch(one, [op]);
    }
    const all = checkLaws(base(), ops);
    expect(toXml(all)).toBe(toXml(one));
    expect(all.childIds(3).length).toBe(1001);
  });
});

/** The code of the `DomError` that `f` throws, or undefined when it returns. */
function errorCode(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as DomError).code;
  }
}
const skeleton = () => skeletonTree(SKELETON);

describe("DOM-1, DOM-11, DOM-14 the id limit and the high-water mark", () => {
  it("DOM-1: ids stop at 2^31 - 1, so page arithmetic never wraps onto the root", () => {
    expect(MAX_NODE_ID).toBe(2 ** 31 - 1);
    expect(errorCode(() => applyPatch(skeleton(), [["set", 0, "hwm", String(2 ** 32)]]))).toBe("bad-op");
    const top = applyPatch(skeleton(), [
      ["set", 0, "hwm", String(MAX_NODE_ID - 1)],
      ["ins", n(3), null, { tag: "last" }],
    ]);
    expect(top.get(MAX_NODE_ID)?.tag).toBe("last");
    expect(top.get(1)?.tag).toBe("session");
    expect(errorCode(() => applyPatch(top, [["ins", n(3), null, { tag: "x" }]]))).toBe("too-large");
    checkLaws(top, [["rm", n(MAX_NODE_ID)]]);
    expect(errorCode(() => parseXml('<a _id="1"><b _id="4294967298"/></a>'))).toBe("bad-id");
  });

  it("DOM-11: a journaled patch may not jump the mark arbitrarily; sparse trees stay cheap anyway", () => {
    const r = tryApplyPatch(skeleton(), [["set", 0, "hwm", String(3 + MAX_HWM_RAISE + 1)]], { monotonic: true });
    expect(!r.ok && r.error.code).toBe("bad-hwm");
    const sparse = applyPatch(skeleton(), [
      ["set", 0, "hwm", "1000000000"],
      ["ins", n(3), null, { tag: "far" }],
    ]);
    expect(sparse.pageCount).toBe(Math.floor(1_000_000_001 / 256) + 1);
    const next = checkLaws(sparse, [["append", n(1_000_000_001), "x"]]);
    expect(next.get(1_000_000_001)?.text).toBe("x");
  });

  it("DOM-1: Tree.has and Tree.get take integers only", () => {
    expect(skeleton().has(1.5)).toBe(false);
    expect(skeleton().get(1.5)).toBeUndefined();
  });

  it("DOM-14: the inverse restores the mark even when a restore-form insert would raise it", () => {
    const p: Op[] = [
      ["ins", n(3), null, { tag: "x" }],
      ["rm", n(4)],
      ["set", 0, "hwm", "3"],
    ];
    const after = applyPatch(skeleton(), p);
    expect(toSnapshot(applyPatch(after, invertPatch(skeleton(), p)))).toBe(toSnapshot(skeleton()));
  });
});

describe("DOM-6 strings", () => {
  const bad = ["\u0000", "a\u0001b", "\u001B[31m", "\u007F\u0008", "\uFFFE", "x\uFFFF", "\uD800", "a\uDC00b", "\uDBFF\uDBFF\uDC00"];
  const good = ["tab\tlf\ncr\r", "é 😀 \u2028 \u00A0", "\uD83D\uDE00", "\u007F", "\u0085", ""];

  it("text and attribute values XML 1.0 cannot carry are bad-text in every op; what it can carry is kept", () => {
    for (const v of bad) {
      checkRejected(base(), [["ins", n(3), null, { tag: "x", text: v }]], "bad-text", 0);
      checkRejected(base(), [["ins", n(3), null, { tag: "x", attrs: { k: v } }]], "bad-text", 0);
      checkRejected(base(), [["set", n(7), "k", v]], "bad-text", 0);
      checkRejected(base(), [["text", n(5), v]], "bad-text", 0);
      checkRejected(base(), [["append", n(5), v]], "bad-text", 0);
    }
    for (const v of good) {
      const t = checkLaws(base(), [
        ["set", n(7), "k", v],
        ["text", n(5), v],
      ]);
      expect(t.get(7)?.attrs.k).toBe(v);
      expect(t.get(5)?.text).toBe(v);
    }
  });

  it("sanitizeText maps any string into that set: controls to their control pictures, the rest to U+FFFD", () => {
    expect(sanitizeText("a\u0000b\u0007c\u001Bd")).toBe("a\u2400b\u2407c\u241Bd");
    expect(sanitizeText("\uFFFE\uFFFF\uD800x\uDC00")).toBe("\uFFFD\uFFFD\uFFFDx\uFFFD");
    for (const v of good) expect(sanitizeText(v)).toBe(v);
    for (const v of bad) {
      const clean = sanitizeText(v);
      expect(() => applyPatch(base(), [["text", n(5), clean]]), JSON.stringify(v)).not.toThrow();
    }
  });
});
