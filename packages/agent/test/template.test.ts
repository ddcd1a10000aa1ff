/** TP-1 … TP-22: the template language — syntax, values, safety, determinism, errors. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseXml, type Tree } from "@strata/dom";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderTemplate, TemplateError } from "../src/template/index.ts";

const FIXTURES = join(import.meta.dirname, "../../../fixtures/prompts");
const tree = parseXml(readFileSync(join(FIXTURES, "session.xml"), "utf8"));
const render = (src: string, vars?: Record<string, unknown>, t: Tree = tree) => renderTemplate(src, t, { name: "t.j2", vars });

function fails(src: string, message: RegExp, where?: [number, number]): TemplateError {
  try {
    render(src);
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    const err = e as TemplateError;
    expect(err.message).toMatch(message);
    expect(err.templateName).toBe("t.j2");
    if (where !== undefined) expect([err.line, err.column]).toEqual(where);
    return err;
  }
  throw new Error(`rendered: ${src}`);
}

describe("TP golden files", () => {
  it("the article's line renders verbatim", () => {
    expect(render(readFileSync(join(FIXTURES, "article.j2"), "utf8"))).toBe(readFileSync(join(FIXTURES, "article.expected.txt"), "utf8"));
    expect(render('- {{ count(select("todo item[status!=completed]")) }} open items')).toBe("- 2 open items");
  });

  it("a realistic system prompt renders exactly", () => {
    expect(renderTemplate(readFileSync(join(FIXTURES, "system.j2"), "utf8"), tree, { name: "system.j2" })).toBe(
      readFileSync(join(FIXTURES, "system.expected.txt"), "utf8"),
    );
  });
});

describe("TP syntax", () => {
  it("if / elif / else, for with loop variables and else, set, comments, raw", () => {
    expect(render("{% if count('item') > 5 %}many{% elif count('item') > 2 %}some{% else %}few{% endif %}")).toBe("some");
    expect(
      render("{% for i in select('item') %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}"),
    ).toBe("10truefalse3;21falsefalse3;32falsetrue3;");
    expect(render("{% for x in [] %}a{% else %}empty{% endfor %}")).toBe("empty");
    expect(
      render("{% for k, v in pairs %}{{ k }}={{ v }} {% endfor %}", {
        pairs: [
          ["a", 1],
          ["b", 2],
        ],
      }),
    ).toBe("a=1 b=2 ");
    expect(render("{% for k, v in rec %}{{ k }}:{{ v }},{% endfor %}", { rec: { x: 1, y: "z" } })).toBe("x:1,y:z,");
    expect(render("{% set n = 2 + 3 * 4 %}{{ n }} {{ n // 3 }} {{ n % 5 }} {{ -n }}")).toBe("14 4 4 -14");
    expect(render("a{# gone #}b")).toBe("ab");
    expect(render("{% raw %}{{ not evaluated }}{% endraw %}")).toBe("{{ not evaluated }}");
    expect(render("{{ 'yes' if 1 in [1, 2] else 'no' }} {{ 'ab' ~ 3 }} {{ 'b' not in 'abc' }}")).toBe("yes ab3 false");
  });

  it("set inside a loop does not leak out of it (Jinja scoping)", () => {
    expect(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = i %}{{ x }}{% endfor %}{{ x }}")).toBe("121");
  });

  it("whitespace control trims on the side of the dash", () => {
    expect(render("a  {{- 1 -}}  b\n  {%- if true -%}\n c {%- endif %}")).toBe("a1bc");
    expect(render("x\n{%- for i in [1,2] %}\n- {{ i }}{% endfor %}")).toBe("x\n- 1\n- 2");
  });
});

describe("TP values and functions", () => {
  it("element values expose tag, attrs, text, id, children and parent", () => {
    expect(
      render(
        "{% set t = selectOne('turn') %}{{ t.tag }} {{ t.attrs.n }} {{ t.children | len }} {{ t.children[0].text }} {{ t.parent.tag }} {{ t.id > 0 }}",
      ),
    ).toBe("turn 1 3 Please implement the store. body true");
    expect(render("{{ selectOne('nothing') == none }}")).toBe("true");
  });

  it("select, selectOne, count, text, attr, len, join, json, escape_xml, trim, indent, default, truncate", () => {
    expect(render("{{ count('item') }} {{ count(select('item')) }} {{ len('abc') }} {{ len([1, 2]) }}")).toBe("3 3 3 2");
    expect(render("{{ text(selectOne('turn')) | truncate(20) }}")).toBe("Please implement th…");
    expect(render("{{ attr(selectOne('tool'), 'replay') }} {{ attr(selectOne('tool'), 'missing') | default('-') }}")).toBe("safe -");
    expect(render("{{ select('tool') | len }}")).toBe("3");
    expect(render("{{ ['a', 'b'] | join }} {{ ['a', 'b'] | join('+') }} {{ 'x' | upper }}")).toBe("ab a+b X");
    expect(render("{{ selectOne('item') | json }}")).toBe('{"id":10,"tag":"item","attrs":{"status":"completed"},"text":"Read DESIGN.md"}');
    expect(render("{{ '<a & \"b\">' | escape_xml }}")).toBe("&lt;a &amp; &quot;b&quot;&gt;");
    expect(render("{{ '  x  ' | trim }}|{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent(2, first=true) }}")).toBe("x|a\n  b|  a\n  b");
    expect(render("{{ missing | default('d') }} {{ none | default('n') }} {{ '' | default('kept') }}")).toBe("d n ");
    expect(render("{{ 'abcdef' | truncate(4, end='.') }}")).toBe("abc.");
  });

  it("variables are plain data; host objects and functions are refused", () => {
    expect(render("{{ user.name }} {{ items | join(',') }}", { user: { name: "ada" }, items: ["a", "b"] })).toBe("ada a,b");
    expect(() => render("{{ x }}", { x: new Date() })).toThrow(/plain data/);
    expect(() => render("{{ x }}", { x: () => 1 })).toThrow(/may not hold a function/);
    expect(() => render("{{ x }}", { x: process })).toThrow(TemplateError);
    // An element's attributes are plain data (they inherit nothing), whatever their prototype object.
    const attrs = parseXml('<a _id="1" tool="grep" status="done"/>').root.attrs;
    expect(render("{{ a.tool }}/{{ a.status }}", { a: attrs })).toBe("grep/done");
    // Anything else with a prototype of its own is still refused.
    expect(() => render("{{ x }}", { x: Object.create(Object.freeze(Object.create(null)) as object) })).toThrow(/plain data/);
  });
});

describe("TP-17 hostile templates", () => {
  const payloads = [
    '{{ range.constructor("return process")() }}',
    '{{ "".constructor.constructor("return process")() }}',
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ self.__init__.__globals__ }}",
    "{{ config.items() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ loop.__proto__.constructor }}",
    "{% for x in select('item') %}{{ x.el }}{{ x.tree }}{{ x.constructor }}{% endfor %}",
    "{{ selectOne('item').constructor('return this')() }}",
    "{{ select.call }}{{ select.apply }}{{ select.bind }}",
    "{{ toString }}{{ valueOf() }}",
    "{{ [].constructor }}{{ [1]['constructor'] }}{{ [1].__proto__ }}",
    "{{ json.constructor('return globalThis')() }}",
    "{{ process.env.HOME }}",
    "{{ require('fs') }}",
    "{{ import('fs') }}",
    "{{ globalThis }}{{ this }}",
    "{% set c = 'constructor' %}{{ loop[c] }}{{ [1][c] }}",
  ];
  for (const p of payloads)
    it(`refuses ${p.slice(0, 60)}`, () => {
      let out: string | undefined;
      try {
        out = render(p);
      } catch (e) {
        expect(e).toBeInstanceOf(TemplateError);
        return;
      }
      // If it rendered, it rendered nothing sensitive.
      expect(out).not.toMatch(/process|function|\[object|native code|env|root/);
    });

  it("bounds output, iterations, calls and queries", () => {
    fails("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", /loops ran more than 100000 iterations/);
    expect(() => renderTemplate("{% for i in range(2000) %}{{ 'yyyyyyyyyy' }}{% endfor %}", tree, { limits: { output: 1000 } })).toThrow(
      /exceed 1000 characters/,
    );
    fails("{% for i in range(2000) %}{{ count('item') }}{% endfor %}", /more than 1000 selector queries/);
  });
});

describe("TP-19/20 errors", () => {
  it("say the template, line, column and what was expected", () => {
    fails("line one\n  {{ missing }}", /t\.j2:2:6: this value is undefined/, [2, 6]);
    fails("{% if true %}\nx", /\{% if %\} is not closed; expected "\{% endif %\}"/, [1, 1]);
    fails("{{ 1 +", /"\{\{" is not closed/, [1, 1]);
    fails("{% endfor %}", /\{% endfor %\} without a matching \{% for %\}/);
    fails("{% frob %}", /unknown tag \{% frob %\}/);
    fails("{{ count('item[') }}", /count\(\): invalid selector/);
    fails("{{ select('x') }}", /cannot print a list; use join\(\)/);
    fails("{{ selectOne('item') }}", /cannot print element <item>; use text\(el\)/);
    fails("{{ 1 < 'a' }}", /cannot compare a number with a string/);
    fails("{{ x | nosuch }}", /unknown filter "nosuch"/);
    // A bad character in a for header is a syntax error too (it escaped as a bare error).
    expect(fails("{% for x in {y %}", /unexpected character "\{"/, [1, 13]).code).toBe("syntax");
  });

  it("undefined is falsy in conditions", () => {
    expect(render("{% if missing %}a{% else %}b{% endif %}{% if missing.deeper.still %}c{% endif %}")).toBe("b");
  });
});

describe("TP-21 purity", () => {
  it("the same template on the same tree gives the same bytes, and never reads the clock or the environment", () => {
    const src = readFileSync(join(FIXTURES, "system.j2"), "utf8");
    const a = renderTemplate(src, tree);
    const b = renderTemplate(src, parseXml(readFileSync(join(FIXTURES, "session.xml"), "utf8")));
    expect(a).toBe(b);
    expect(() => render("{{ now() }}")).toThrow(/not a function/);
    expect(() => render("{{ random() }}")).toThrow(/not a function/);
  });

  it("property: rendering random templates on random trees throws nothing but TemplateError", () => {
    const pieces = [
      "{{",
      "}}",
      "{%",
      "%}",
      "{#",
      "#}",
      "-",
      " ",
      "if",
      "for",
      "in",
      "else",
      "endif",
      "endfor",
      "set",
      "x",
      "=",
      "item",
      "loop",
      ".",
      "index",
      "select(",
      "selectOne(",
      "count(",
      "'item'",
      '"todo item[status!=completed]"',
      ")",
      "|",
      "join",
      "default",
      "truncate",
      "(",
      ",",
      "1",
      "0",
      "'a'",
      "[",
      "]",
      "constructor",
      "__proto__",
      "attrs",
      "text",
      "children",
      "~",
      "+",
      "//",
      "not",
      "and",
      "or",
      "==",
      "<",
      "none",
      "\n",
      "raw",
      "endraw",
      "json",
      "len",
      "'['",
      "attr",
      "parent",
      "tag",
      // TP-23: pieces that build large values (doubling, nesting, wide ranges, growing filters)
      "{% set x = x ~ x %}",
      "{% set x = x + x %}",
      "{% set x = [x, x] %}",
      "{% set x = 'ßßßßßßßß' %}",
      "{% set x = [1,2,3,4,5,6,7,8] %}",
      "range(100000)",
      "indent(99999999)",
      "upper",
      "escape_xml",
      "json(indent=10)",
      "select('*')",
    ];
    const template = fc.array(fc.constantFrom(...pieces), { maxLength: 60 }).map((p) => p.join(""));
    const trees = fc.constantFrom(tree, parseXml("<r/>"), parseXml("<session><meta/><body><item status='x'>a</item></body></session>"));
    fc.assert(
      fc.property(template, trees, (src, t) => {
        try {
          const out = renderTemplate(src, t, { name: "fuzz" });
          expect(typeof out).toBe("string");
        } catch (e) {
          if (!(e instanceof TemplateError)) throw e;
          expect(e.message).not.toMatch(/engine bound/); // every bound is checked before V8's own
        }
      }),
      { numRuns: Number(process.env.STRATA_FC_RUNS ?? 3000) },
    );
  });
});
