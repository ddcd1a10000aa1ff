/**
 * Prompt rendering (issue 5): a 2,000-token system prompt template with 10 selector expressions,
 * rendered over a 100,000-element session tree, next to the same 10 selector calls run directly
 * (the same run, interleaved). Both use the tag index (DOM-33) that the session carries along
 * its head; the cold figures include building it (one walk), and the traversal figure is the
 * same selectors on a copy with no index.
 *
 * Run: npx tsx bench/run.ts prompt
 */

import { renderTemplate } from "@strata/agent";
import {
  applyPatch,
  count,
  ensureIndex,
  fromSnapshot,
  type NodeSpec,
  nodeId,
  select,
  selectOne,
  skeletonTree,
  type Tree,
  toSnapshot,
} from "@strata/dom";
import { type Aggregate, type BenchModule, cell, isMain, progress, type RunResult, ratio, runAsScript } from "../lib/harness.ts";
import { interleave, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "prompt";
const ELEMENTS = Number(process.env.BENCH_ELEMENTS ?? 100_000);

/** A long agent session: config, a todo list, and turns with calls, results and usage. */
export function sessionTree(elements: number): Tree {
  const turns: NodeSpec[] = [];
  let n = 0;
  for (let i = 0; n < elements - 300; i++) {
    const calls: NodeSpec[] = [0, 1].map((c) => ({
      tag: "call",
      attrs: {
        id: `call_${i}_${c}`,
        tool: c ? "read_file" : "write_file",
        status: i % 97 === 0 && c ? "env_error" : "executed",
        replay: c ? "safe" : "never",
      },
      children: [
        { tag: "args", text: `{"path":"src/module_${i % 211}.ts"}` },
        { tag: "result", text: "ok" },
      ],
    }));
    turns.push({ tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: `step ${i}: continue` }] });
    turns.push({
      tag: "turn",
      attrs: { role: "assistant", status: "complete", model: "openai:gpt" },
      children: [{ tag: "text", text: "working on it" }, ...calls, { tag: "usage", attrs: { input: "1200", output: "80" } }],
    });
    n += 11;
  }
  const config: NodeSpec = {
    tag: "config",
    children: [
      { tag: "model", attrs: { provider: "openai", model: "gpt-4o-mini", temperature: "0.2" } },
      { tag: "settings", attrs: { "max-steps": "200", workspace: "/work" } },
      {
        tag: "tools",
        children: ["read_file", "list_dir", "write_file", "edit_file", "run", "todo", "submit"].map((name) => ({
          tag: "tool",
          attrs: {
            name,
            replay: name.startsWith("read") || name === "list_dir" ? "safe" : "never",
            "completes-run": String(name === "submit"),
          },
        })),
      },
    ],
  };
  const todo: NodeSpec = {
    tag: "todo",
    children: Array.from({ length: 24 }, (_, k) => ({
      tag: "item",
      attrs: { status: k < 15 ? "completed" : k === 15 ? "in_progress" : "pending" },
      text: `Refactor module ${k} and update its tests`,
    })),
  };
  let t = applyPatch(skeletonTree({ tag: "session", children: [{ tag: "meta" }, { tag: "body" }] }), [
    ["ins", nodeId(2), null, config],
    ["ins", nodeId(2), null, todo],
  ]);
  for (const s of turns) {
    const prev = t.rec(3)?.last ?? 0;
    t = applyPatch(t, [["ins", nodeId(3), prev === 0 ? null : nodeId(prev), s]]);
  }
  return t;
}

const PROSE =
  "Work in small, verifiable steps. Before changing a file, read it; after changing it, run the tests that cover it and read their output. Never guess at an API: look it up in the code. Keep the plan current with the todo tool, sending the whole list every time. When a tool fails because the environment is broken, say so and stop instead of retrying. Prefer editing over rewriting, and keep diffs small so that a reviewer can follow them. ";

/** ~2,000 tokens: prose, the tool roster, the plan, failures and counts — 10 selector expressions. */
export const TEMPLATE = `You are a careful coding agent working in {{ attr(selectOne("meta > config > settings"), "workspace") }}.
Model: {{ attr(selectOne("meta > config > model"), "model") }} (temperature {{ attr(selectOne("meta > config > model"), "temperature") | default("1") }})

## How to work
${PROSE.repeat(11)}
## Tools
{% for tool in select("meta > config > tools > tool") -%}
- {{ tool.attrs.name }}{% if tool.attrs["completes-run"] == "true" %} (ends the run){% endif %}{% if tool.attrs.replay == "safe" %}, safe to re-run{% endif %}
{% endfor %}
## Plan
- {{ count(select("todo item[status!=completed]")) }} open items
{% for item in select("meta > todo > item") -%}
{{ loop.index }}. [{{ "x" if item.attrs.status == "completed" else " " }}] {{ item.text | trim }}{% if item.attrs.status == "in_progress" %}  (now){% endif %}
{% endfor %}
## State
- calls still running: {{ count("call[status=running]") }}
- calls the model got wrong: {{ count("call[status=not_executed]") }}
- interrupted calls: {{ count("call[status=interrupted]") }}
{%- set failed = select("call[status=env_error]") %}
- environment failures: {{ len(failed) }}{% if failed %}, the last: {{ attr(failed | last, "tool") }} ({{ attr(failed | last, "id") }}){% endif %}
${PROSE.repeat(3)}`;

const SELECTORS: [string, "one" | "all" | "count"][] = [
  ["meta > config > settings", "one"],
  ["meta > config > model", "one"],
  ["meta > config > model", "one"],
  ["meta > config > tools > tool", "all"],
  ["todo item[status!=completed]", "all"],
  ["meta > todo > item", "all"],
  ["call[status=running]", "count"],
  ["call[status=not_executed]", "count"],
  ["call[status=interrupted]", "count"],
  ["call[status=env_error]", "all"],
];

function direct(t: Tree): number {
  let n = 0;
  for (const [s, mode] of SELECTORS)
    n += mode === "one" ? (selectOne(t, s) === undefined ? 0 : 1) : mode === "count" ? count(t, s) : select(t, s).length;
  return n;
}

const mod: BenchModule = {
  title: "Prompt rendering over a large tree",
  measure(): RunResult {
    progress(NAME, `building a ${ELEMENTS}-element tree`);
    const t = sessionTree(ELEMENTS);
    const out = renderTemplate(TEMPLATE, t, { name: "system" });
    const tokens = Math.round(out.length / 4);
    progress(NAME, "warm: render vs the selectors directly");
    ensureIndex(t);
    const warm = interleave(
      { render: () => renderTemplate(TEMPLATE, t, { name: "system" }), direct: () => direct(t) },
      { iterations: 30, minSampleMs: 5 },
    );
    progress(NAME, "cold (index built) and traversal");
    const cold: number[] = [];
    const traversal: number[] = [];
    const bytes = toSnapshot(t);
    for (let i = 0; i < 7; i++) {
      const copy = fromSnapshot(bytes);
      let a = performance.now();
      renderTemplate(TEMPLATE, copy, { name: "system" });
      cold.push(performance.now() - a);
      // traversal: a small index-free tree would not index; force the traversal by querying with `within` the root
      const plain = fromSnapshot(bytes);
      a = performance.now();
      for (const [s] of SELECTORS) select(plain, s, { within: 1 });
      traversal.push(performance.now() - a);
    }
    const metrics: Record<string, Sample> = {
      render: warm.render,
      direct: warm.direct,
      cold: summarize(cold, "ms"),
      traversal: summarize(traversal, "ms"),
    };
    return { metrics, values: { renderRatio: warm.render.median / warm.direct.median, tokens, elements: t.size } };
  },
  render(agg: Aggregate): string {
    return [
      `### ${mod.title}`,
      "",
      `A ${agg.values.tokens?.median ?? "?"}-token system prompt (prose, the roster, the plan, counts and failures: 10 selector expressions) rendered over a ${agg.values.elements?.median.toLocaleString("en-US")}-element session tree. *direct*: the same 10 selector calls made directly, interleaved with the renders. *cold*: the first render on a freshly loaded tree (builds the tag index: one walk). *traversal*: the 10 selectors with no index (css-select walking the tree).`,
      "",
      table(
        ["render (warm)", "selectors directly", "render / direct", "render (cold, builds index)", "selectors by traversal"],
        [[cell(agg, "render"), cell(agg, "direct"), ratio(agg, "renderRatio"), cell(agg, "cold"), cell(agg, "traversal")]],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const ms = agg.metrics.render?.median ?? Number.NaN;
    return [
      `${ms <= 5 ? "**PASS**" : "**FAIL**"} — a 2,000-token system prompt with 10 selector expressions over ${agg.values.elements?.median.toLocaleString("en-US")} elements ≤ 5 ms: ${cell(agg, "render")} (selectors alone ${cell(agg, "direct")})`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
