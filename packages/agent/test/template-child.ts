/**
 * Child process of template-memory.test.ts: renders each hostile template named on the command
 * line (run with a small --max-old-space-size) and prints one JSON line per template, then the
 * peak resident memory it reached above its baseline. A template that exhausted the heap would
 * kill this process instead.
 */
import { readFileSync } from "node:fs";
import { parseXml } from "@strata/dom";
import { renderTemplate, TemplateError } from "../src/index.ts";

const doubling = (init: string, step: string, times = 24): string =>
  [`{% set x = ${init} %}`, ...Array(times).fill(step), "{{ len(x) }}"].join("\n");

const TEMPLATES: Record<string, string> = {
  "list-doubling": doubling("[1,2,3,4,5,6,7,8]", "{% set x = x + x %}"),
  "string-doubling": doubling("'abcdefgh'", "{% set x = x ~ x %}", 40),
  "string-plus-doubling": doubling("'abcdefgh'", "{% set x = x + x %}", 40),
  "self-nesting-json": `${doubling("[1]", "{% set x = [x, x] %}", 60)}{{ x | json | len }}`,
  "wide-join": `${doubling("'xxxxxxxx'", "{% set x = x ~ x %}", 18)}{{ range(100000) | join(x) | len }}`,
  "upper-of-huge": `${doubling("'ßßßßßßßß'", "{% set x = x ~ x %}", 18)}{{ x | upper | len }}`,
  "indent-of-huge": `${doubling("'a\\n'", "{% set x = x ~ x %}", 20)}{{ x | indent(1000) | len }}`,
};

/**
 * Peak RSS of this process in KiB. `VmHWM` on Linux, not `maxRSS`: a spawned child's `maxRSS`
 * starts from its parent's RSS at the fork (the test worker's, often more than the growth bound),
 * which would hide any growth below it.
 */
function peakRssKb(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m !== null) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

const tree = parseXml("<session><meta/><body/></session>");
const baseline = peakRssKb();
for (const name of process.argv.slice(2)) {
  const src = TEMPLATES[name];
  if (src === undefined) throw new Error(`no template named ${name}`);
  try {
    renderTemplate(src, tree, { name });
    console.log(JSON.stringify({ name, rendered: true }));
  } catch (e) {
    if (!(e instanceof TemplateError)) {
      console.log(JSON.stringify({ name, error: String(e) }));
      continue;
    }
    console.log(JSON.stringify({ name, code: e.code, limit: e.limit, line: e.line, column: e.column, message: e.message }));
  }
}
console.log(JSON.stringify({ peakRssGrowthKb: peakRssKb() - baseline }));
