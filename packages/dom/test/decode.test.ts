/** DOM-15: ops decoded from untrusted JSON, with precise errors. */
import { describe, expect, it } from "vitest";
import { DomError, decodeOp, decodePatch, MAX_DEPTH, OP_KINDS } from "../src/index.ts";

const fails = (data: unknown, code: string, message: RegExp) => {
  try {
    decodePatch(data);
    expect.unreachable(`accepted ${JSON.stringify(data)}`);
  } catch (e) {
    expect(e).toBeInstanceOf(DomError);
    expect((e as DomError).code).toBe(code);
    expect((e as DomError).message).toMatch(message);
  }
};

describe("DOM-15 decodeOp / decodePatch", () => {
  it("accepts every op kind and returns a deep copy equal to the input", () => {
    const json = `[["ins",1,null,{"tag":"a","attrs":{"k":"v"},"children":[{"tag":"b","text":"x"}]}],["rm",4],
      ["set",2,"status","done"],["set",2,"status",null],["set",0,"hwm","9"],["mv",3,1,2],["text",3,"t"],["append",3,"u"]]`;
    const data = JSON.parse(json);
    const ops = decodePatch(data);
    expect(ops).toEqual(data);
    expect(ops[0]).not.toBe(data[0]);
    expect((ops[0] as unknown as unknown[])[3]).not.toBe(data[0][3]);
    expect(new Set(ops.map((o) => o[0]))).toEqual(new Set(OP_KINDS));
  });

  it("names the failing op's index and what was expected", () => {
    fails(
      [
        ["rm", 1],
        ["frob", 2],
      ],
      "bad-op",
      /^op 1: unknown op kind "frob"; patch@1 ops are ins, rm, set, mv, text, append$/,
    );
    fails([["rm", 1, 2]], "bad-op", /^op 0: "rm" takes 1 arguments, got 2$/);
    fails([["set", 1, "a"]], "bad-op", /takes 3 arguments, got 2/);
    fails([["rm", 0]], "bad-op", /rm id must be a node id/);
    fails([["rm", 1.5]], "bad-op", /rm id must be a node id .* got number 1.5/);
    fails([["rm", "1"]], "bad-op", /got "1"/);
    fails([["mv", 1, 2, "x"]], "bad-op", /mv after must be a node id or null/);
    fails([["ins", 1, null, []]], "bad-op", /node must be an object/);
    fails([["ins", 1, null, { tag: "a", children: {} }]], "bad-op", /children must be an array/);
    fails([["ins", 1, null, { tag: "a", attrs: { k: 1 } }]], "bad-text", /must be a string, got number 1/);
    fails([["set", 1, "k", 5]], "bad-text", /must be a string/);
    fails([["text", 1, null]], "bad-text", /must be a string, got null/);
    fails([["set", 1, "constructor", "x"]], "bad-name", /reserved \(it would reach object prototypes\)/);
    fails([["ins", 1, null, { tag: "a", children: [{ tag: "ok" }, { tag: "b c" }] }]], "bad-name", /is not allowed/);
    fails("not a patch", "bad-op", /a patch must be an array of ops/);
    fails([{}], "bad-op", /an op must be an array/);
  });

  it("rejects prototype pollution attempts in JSON input without polluting anything", () => {
    const data = JSON.parse('[["ins",1,null,{"tag":"a","attrs":{"__proto__":{"polluted":"yes"}}}]]');
    expect(() => decodePatch(data)).toThrow(DomError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const data2 = JSON.parse('[["ins",1,null,{"tag":"a","__proto__":{"x":1}}]]');
    expect(() => decodePatch(data2)).toThrow(/unknown key "__proto__"/);
  });

  it("decodeOp decodes one op", () => {
    expect(decodeOp(["append", 3, "x"])).toEqual(["append", 3, "x"]);
    expect(() => decodeOp(["append", 3])).toThrow(/takes 2 arguments, got 1/);
  });

  it("DOM-34: decodes specs up to MAX_DEPTH levels; refuses a 50,000-deep one with too-large, not a RangeError", () => {
    const chain = (levels: number): Record<string, unknown> => {
      let spec: Record<string, unknown> = { tag: "x" };
      for (let i = 1; i < levels; i++) spec = { tag: "x", children: [spec] };
      return spec;
    };
    expect(decodePatch([["ins", 1, null, chain(MAX_DEPTH)]])).toHaveLength(1);
    for (const levels of [MAX_DEPTH + 1, 50_000]) {
      const e = (() => {
        try {
          decodePatch([["ins", 1, null, chain(levels)]]);
        } catch (error) {
          return error as DomError;
        }
      })();
      expect(e).toBeInstanceOf(DomError);
      expect(e?.code).toBe("too-large");
      expect(e?.message).toMatch(/op 0: .*1001 levels deep; a tree is at most 1000 levels deep/);
    }
  });
});
