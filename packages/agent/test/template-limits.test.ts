/**
 * TP-22 … TP-25: a hostile template cannot crash the process or hang it. Every doubling and
 * amplification shape ends in a `TemplateError` with code `limit`, the bound it reached, the
 * template's name, line and column; nothing else escapes (no RangeError, no out-of-memory).
 * The memory bound itself is proven in a child process with a small heap (template-memory.test.ts).
 */
import { parseXml, type Tree } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderPrompt, runAgent, TemplateError, type TemplateLimit, ToolRegistry } from "../src/index.ts";
import { renderTemplate } from "../src/template/index.ts";
import { InlineModel } from "./agent-kit.ts";

const small = parseXml("<session><meta/><body><turn n='1'><text>hello</text><b>world</b></turn><item status='x'>a</item></body></session>");
const lines = (...statements: string[]): string => statements.join("\n");
const doubled = (init: string, step: string, times: number): string =>
  lines(`{% set x = ${init} %}`, ...Array(times).fill(step), "{{ len(x) }}");

/** Renders and returns the TemplateError it must throw (anything else fails the test). */
function limitError(src: string, tree: Tree = small, vars?: Record<string, unknown>): TemplateError {
  let thrown: unknown;
  try {
    renderTemplate(src, tree, { name: "hostile.j2", vars });
  } catch (e) {
    thrown = e;
  }
  if (!(thrown instanceof TemplateError)) throw new Error(`expected a TemplateError, got ${String(thrown)}`);
  expect(thrown.code).toBe("limit");
  expect(thrown.templateName).toBe("hostile.j2");
  expect(thrown.line).toBeGreaterThan(0);
  expect(thrown.column).toBeGreaterThan(0);
  // Never the last-resort guard: every bound is checked before the engine's own.
  expect(thrown.message).not.toMatch(/engine bound/);
  return thrown;
}

describe("TP-23 the shapes of issue 11 item 22", () => {
  it("TP-23 list doubling (l + l, 24 times) stops at the list-length limit on the line that passes it", () => {
    const e = limitError(doubled("[1,2,3,4,5,6,7,8]", "{% set x = x + x %}", 24));
    expect(e.limit).toBe("list-length");
    // 8·2^13 = 65,536 items is fine; the 14th doubling (line 15) would make 131,072.
    expect([e.line, e.column]).toEqual([15, 14]);
    expect(e.message).toMatch(/hostile\.j2:15:14: the sum of the lists \(\+\) would have 131072 items \(limit 100000\)/);
  });

  it("TP-23 string doubling with ~ and + stops at the string-length limit", () => {
    for (const step of ["{% set x = x ~ x %}", "{% set x = x + x %}", "{% set x = x ~ x ~ x ~ x %}"]) {
      const e = limitError(doubled("'abcdefgh'", step, 40));
      expect(e.limit).toBe("string-length");
      expect(e.message).toMatch(/would be \d+ characters long \(limit 4000000\)/);
    }
  });

  const shapes: [string, string, TemplateLimit][] = [
    ["indent of a doubled string", lines(doubled("'a\\n'", "{% set x = x ~ x %}", 18), "{{ x | indent(100) | len }}"), "string-length"],
    ["indent with a width of a billion", "{{ 'a\\nb' | indent(1000000000) }}", "string-length"],
    ["indent with a huge width, first=true", "{{ 'a' | indent(99999999999, first=true) }}", "string-length"],
    [
      "join with a long separator",
      lines(doubled("'xxxxxxxx'", "{% set x = x ~ x %}", 15), "{{ range(1000) | join(x) | len }}"),
      "string-length",
    ],
    [
      "join of a list of long strings",
      lines(doubled("'xxxxxxxx'", "{% set x = x ~ x %}", 15), "{{ [x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x] | join | len }}"),
      "string-length",
    ],
    [
      "upper() of a string that grows (ß → SS)",
      lines(doubled("'ßßßßßßßß'", "{% set x = x ~ x %}", 18), "{{ x | upper | len }}"),
      "string-length",
    ],
    ["escape_xml() of ampersands", lines(doubled("'&&&&&&&&'", "{% set x = x ~ x %}", 18), "{{ x | escape_xml | len }}"), "string-length"],
    [
      "json() of a list that holds itself (exponential expansion)",
      lines(doubled("[1]", "{% set x = [x, x] %}", 40), "{{ x | json | len }}"),
      "string-length",
    ],
    [
      "json() with indentation of a wide list",
      lines("{% set x = range(100000) %}{% set x = [x, x, x, x, x, x, x, x] %}", "{{ x | json(indent=10) | len }}"),
      "string-length",
    ],
    ["nesting lists in lists", doubled("[]", "{% set x = [x] %}", 100), "depth"],
    [
      "nesting by list concatenation keeps the deeper depth",
      lines(doubled("[]", "{% set x = [x] %}", 64), "{% set y = [] + x %}{% set z = [y] %}"),
      "depth",
    ],
    ["range(1e9)", "{{ range(1000000000) | len }}", "list-length"],
    ["range(0, 10^300)", "{{ range(0, 1000000000000000000000000000000000000000) | len }}", "list-length"],
    ["a list literal repeated by concatenation", doubled("[[1,2],[3,4]]", "{% set x = x + x + x + x %}", 12), "list-length"],
    ["a loop over a huge string", lines(doubled("'ab'", "{% set x = x ~ x %}", 20), "{% for c in x %}{% endfor %}"), "list-length"],
    ["nested loops", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "iterations"],
    ["a linear scan in a loop (in)", "{% set l = range(100000) %}{% for i in l %}{% if i in l %}{% endif %}{% endfor %}", "steps"],
    [
      "a long comparison in a loop",
      lines(
        doubled("'ab'", "{% set x = x ~ x %}", 20),
        "{% set y = x ~ '' %}{% for i in range(100000) %}{% if x == y %}{% endif %}{% endfor %}",
      ),
      "steps",
    ],
    ["a deep chain of +", `{{ ${"1 + ".repeat(5000)}1 }}`, "depth"],
    ["a deep chain of filters", `{{ 'a'${" | trim".repeat(5000)} }}`, "depth"],
    ["a deep chain of members", `{{ x${".y".repeat(5000)} }}`, "depth"],
    ["a deep chain of indexes", `{{ x${"[0]".repeat(5000)} }}`, "depth"],
    ["a deep chain of calls", `{{ range${"()".repeat(5000)} }}`, "depth"],
    ["a deep chain of not", `{{ ${"not ".repeat(5000)}1 }}`, "depth"],
    ["a deep chain of unary minus", `{{ ${"-".repeat(5000)}1 }}`, "depth"],
    ["a deep chain of conditionals", `{{ ${"1 if 0 else ".repeat(5000)}1 }}`, "depth"],
    ["a deep chain of not in", `{{ ${"1 not in ".repeat(5000)}[] }}`, "depth"],
    ["deep parentheses", `{{ ${"(".repeat(5000)}1${")".repeat(5000)} }}`, "depth"],
    ["deep list literals", `{{ ${"[".repeat(5000)}1${"]".repeat(5000)} }}`, "depth"],
    ["deeply nested blocks", `${"{% if 1 %}".repeat(500)}x${"{% endif %}".repeat(500)}`, "depth"],
    ["output of a loop", "{% for i in range(100000) %}{{ 'yyyyyyyyyyyyyyyyyyyy' }}{% endfor %}", "output"],
    ["a template past its size limit", "x".repeat(1_000_001), "template-size"],
  ];
  for (const [what, src, limit] of shapes)
    it(`${["string-length", "list-length", "allocation"].includes(limit) || what.startsWith("nesting") ? "TP-23" : "TP-22"} ${what} → ${limit}`, () => {
      expect(limitError(src, small, { x: {} }).limit).toBe(limit);
    });

  it("TP-23 allocation is counted in all: text() of a big tree over and over", () => {
    const big = parseXml(`<r>${"<t>0123456789abcdef0123456789abcdef</t>".repeat(20_000)}</r>`);
    const e = limitError("{% for i in range(100000) %}{% set t = text(selectOne('r')) %}{% endfor %}", big);
    expect(e.limit).toBe("allocation");
    expect(e.message).toMatch(/allocated more than 64000000 units/);
    // A lower allocation bound is reached sooner, with the same code.
    expect(() => renderTemplate("{{ text(selectOne('r')) | len }}", big, { limits: { allocation: 1000 } })).toThrow(/allocated more/);
  });

  it("TP-23 select() and children cannot make lists past the list-length limit", () => {
    const wide = parseXml(`<r>${"<a/>".repeat(100_001)}</r>`);
    expect(limitError("{{ select('a') | len }}", wide).limit).toBe("list-length");
    expect(limitError("{{ selectOne('r').children | len }}", wide).limit).toBe("list-length");
    expect(renderTemplate("{{ count('a') }}", wide)).toBe("100001");
  });

  it("TP-23 the limits are options; ordinary templates are far inside them", () => {
    expect(renderTemplate("{% set x = 'ab' %}{% set x = x ~ x %}{{ x }}", small, { limits: { stringLength: 4 } })).toBe("abab");
    expect(() => renderTemplate("{% set x = 'ab' %}{% set x = x ~ x ~ x %}", small, { limits: { stringLength: 4 } })).toThrow(
      /would be 6 characters long \(limit 4\)/,
    );
    const bad = (() => {
      try {
        renderTemplate("x", small, { limits: { output: -1 } });
      } catch (e) {
        return e as TemplateError;
      }
    })();
    expect(bad).toBeInstanceOf(TemplateError);
    expect(bad?.code).toBe("options");
    expect(renderTemplate("{{ range(3) | json(indent=2) }}", small)).toBe(JSON.stringify([0, 1, 2], null, 2));
  });

  it("TP-20 an error quotes only a short piece of a huge identifier, string, tag or selector", () => {
    const long = "a".repeat(200_000);
    for (const src of [
      `{{ x | ${long} }}`,
      `{{ ${long}() }}`,
      `{{ 1 '${long}' }}`,
      `{% ${"9".repeat(200_000)} %}`,
      `{% ${long} %}`,
      `{{ count('${"[".repeat(200_000)}') }}`,
    ]) {
      let message = "";
      try {
        renderTemplate(src, small, { name: "t" });
      } catch (e) {
        expect(e).toBeInstanceOf(TemplateError);
        message = (e as Error).message;
      }
      expect(message).not.toBe("");
      expect(message.length, message.slice(0, 100)).toBeLessThan(600);
    }
  });

  it("TP-2 trimming white space is linear (a long run of spaces before {{- used to backtrack)", { timeout: 10_000 }, () => {
    // The old /\s+$/ took minutes here (quadratic); trimEnd takes milliseconds.
    expect(renderTemplate(`${" ".repeat(300_000)}a  {{- 1 }}`, small)).toBe(`${" ".repeat(300_000)}a1`);
  });

  it("TP-24 json() writes exactly what JSON.stringify writes (differential)", () => {
    const forbidden = new Set([
      "__proto__",
      "constructor",
      "prototype",
      "__defineGetter__",
      "__defineSetter__",
      "__lookupGetter__",
      "__lookupSetter__",
    ]);
    const clean = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(clean)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.entries(v)
                .filter(([k]) => !forbidden.has(k))
                .map(([k, x]) => [k, clean(x)]),
            )
          : v;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 14 }), (raw, indent) => {
        const x = clean(raw);
        expect(renderTemplate(`{{ x | json(indent=${indent}) }}`, small, { vars: { x } })).toBe(JSON.stringify(x, null, indent));
      }),
      { numRuns: 500 },
    );
    expect(renderTemplate("{{ selectOne('item') | json }}", small)).toMatch(
      /^\{"id":\d+,"tag":"item","attrs":\{"status":"x"\},"text":"a"\}$/,
    );
  });
});

describe("TP-23 property: random amplifying programs throw nothing but TemplateError", () => {
  const value = fc.constantFrom("a", "b", "c", "[a]", "[a, b]", "[a, a, a, a]", "range(50000)", "'xyzxyzxyz'", "select('*')", "[]", "1");
  const step = fc.oneof(
    fc
      .tuple(fc.constantFrom("a", "b", "c"), value, fc.constantFrom("+", "~"), value)
      .map(([n, l, op, r]) => `{% set ${n} = ${l} ${op} ${r} %}`),
    fc.tuple(fc.constantFrom("a", "b", "c"), value).map(([n, v]) => `{% set ${n} = ${v} %}`),
    fc
      .tuple(
        fc.constantFrom("a", "b", "c"),
        value,
        fc.constantFrom(
          "join",
          "join(a)",
          "json",
          "json(indent=10)",
          "upper",
          "escape_xml",
          "indent(100000)",
          "indent(7, first=true)",
          "trim",
          "truncate(100000)",
          "string",
          "len",
          "first",
          "last",
        ),
      )
      .map(([n, v, f]) => `{% set ${n} = ${v} | ${f} %}`),
    fc.tuple(value, value).map(([l, r]) => `{% for i in ${l} %}{% if i in ${r} %}.{% endif %}{% endfor %}`),
    fc.tuple(value).map(([v]) => `{{ ${v} | len }}`),
  );
  const program = fc
    .array(step, { minLength: 1, maxLength: 40 })
    .map((s) => `{% set a = 'ab' %}{% set b = [1, 2] %}{% set c = 'q' %}${s.join("")}`);
  it("TP-23 only TemplateError, and never the engine-bound guard", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(program, (src) => {
        try {
          const out = renderTemplate(src, small, { name: "fuzz" });
          expect(out.length).toBeLessThanOrEqual(1_000_000);
        } catch (e) {
          if (!(e instanceof TemplateError)) throw e;
          expect(e.message).not.toMatch(/engine bound/);
          expect(["syntax", "render", "limit"]).toContain(e.code);
          if (e.code === "limit") expect(e.limit).toBeDefined();
        }
      }),
      { numRuns: Number(process.env.STRATA_FC_RUNS ?? 250) },
    );
  });
});

describe("TP-25 a template that reaches a limit is a recorded prompt-error (AG-3)", () => {
  it("runAgent stops with prompt-error naming the limit; renderPrompt throws the coded TemplateError", async () => {
    const s = Session.create(openStore(":memory:"));
    const system = doubled("[1,2,3,4,5,6,7,8]", "{% set x = x + x %}", 24);
    const r = await runAgent(s, {
      model: new InlineModel([{ text: "never asked" }]),
      registry: new ToolRegistry([]),
      task: "hi",
      templates: { system },
    });
    expect(r.stop).toBe("prompt-error");
    expect(r.detail).toMatch(/system:15:14: the sum of the lists \(\+\) would have 131072 items/);
    expect(s.selectOne("body > stop")?.attrs.reason).toBe("prompt-error");
    const e = (() => {
      try {
        renderPrompt(s);
      } catch (x) {
        return x as TemplateError;
      }
    })();
    expect(e).toBeInstanceOf(TemplateError);
    expect([e?.code, e?.limit]).toEqual(["limit", "list-length"]);
  });
});
