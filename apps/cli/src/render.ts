/** Human views of trees, diffs and ops (CLI-6, CLI-7); `Out` makes whatever they quote terminal-safe (CLI-26). */
import { describeOp, type Element, type Op, type Tree, type TreeDiff } from "@strata/dom";
import type { Out } from "./output.ts";
import { oneLine } from "./terminal.ts";

function attrs(out: Out, a: Readonly<Record<string, string>>): string {
  return Object.entries(a)
    .map(([k, v]) => out.paint("yellow", `${k}=`) + JSON.stringify(/^[0-9a-f]{64}$/.test(v) ? `${v.slice(0, 12)}…` : v))
    .join(" ");
}

/** An indented tree view of `el` and its descendants (`depth` levels at most). */
export function treeView(out: Out, el: Element, maxDepth = Number.POSITIVE_INFINITY): string[] {
  const lines: string[] = [];
  const visit = (e: Element, prefix: string, last: boolean, depth: number, root: boolean) => {
    const head = `${out.paint("cyan", e.tag)} ${out.paint("dim", `#${e.id}`)}`;
    const a = attrs(out, e.attrs);
    const text = e.text === "" ? "" : `  ${out.paint("green", JSON.stringify(oneLine(e.text, 100)))}`;
    lines.push(`${root ? "" : prefix + (last ? "└─ " : "├─ ")}${head}${a === "" ? "" : ` ${a}`}${text}`);
    const kids = e.children;
    if (depth >= maxDepth && kids.length > 0) {
      lines.push(`${root ? "" : prefix + (last ? "   " : "│  ")}${out.paint("dim", `… ${kids.length} children`)}`);
      return;
    }
    const next = root ? "" : prefix + (last ? "   " : "│  ");
    for (const [i, k] of kids.entries()) visit(k, next, i === kids.length - 1, depth + 1, false);
  };
  visit(el, "", true, 0, true);
  return lines;
}

/** Plain data of an element and its subtree, for --json. */
export function elementJson(e: Element): unknown {
  const kids = e.children;
  return {
    id: e.id,
    tag: e.tag,
    attrs: { ...e.attrs },
    ...(e.text !== "" ? { text: e.text } : {}),
    ...(kids.length > 0 ? { children: kids.map(elementJson) } : {}),
  };
}

/** A one-line summary of a patch, for `strata log`: the dom describes each op (`describeOp`). */
export function summarizeOps(ops: readonly Op[], tree?: Tree): string {
  const quote = (s: string, max: number): string => JSON.stringify(oneLine(s, max));
  const parts = ops.slice(0, 4).map((op) => describeOp(op, { quote, tree }));
  return parts.join(", ") + (ops.length > 4 ? `, … (${ops.length} ops)` : "");
}

/** A readable structural diff. */
export function diffView(out: Out, d: TreeDiff, a: Tree, b: Tree): string[] {
  const lines: string[] = [];
  for (const x of d.added)
    lines.push(
      out.paint(
        "green",
        `+ <${x.node.tag}> #${x.id} in <${b.get(x.at.parent)?.tag ?? "?"}> #${x.at.parent}${x.node.text ? `  "${oneLine(x.node.text, 60)}"` : ""}`,
      ),
    );
  for (const x of d.removed)
    lines.push(
      out.paint(
        "red",
        `- <${x.node.tag}> #${x.id} from <${a.get(x.at.parent)?.tag ?? "?"}> #${x.at.parent}${x.node.text ? `  "${oneLine(x.node.text, 60)}"` : ""}`,
      ),
    );
  for (const c of d.attrs)
    lines.push(
      out.paint(
        "yellow",
        `~ <${(b.get(c.id) ?? a.get(c.id))?.tag}> #${c.id} ${c.name}: ${c.before === null ? "∅" : JSON.stringify(c.before)} → ${c.after === null ? "∅" : JSON.stringify(c.after)}`,
      ),
    );
  for (const t of d.text)
    lines.push(out.paint("yellow", `~ <${b.get(t.id)?.tag}> #${t.id} text: "${oneLine(t.before, 40)}" → "${oneLine(t.after, 40)}"`));
  for (const m of d.moved) lines.push(out.paint("magenta", `↷ <${b.get(m.id)?.tag}> #${m.id}: #${m.from.parent} → #${m.to.parent}`));
  if (d.hwm.before !== d.hwm.after) lines.push(out.paint("dim", `  ids minted up to ${d.hwm.after} (was ${d.hwm.before})`));
  return lines;
}

/** A line diff (LCS on what lies between the common prefix and suffix). */
export function lineDiff(a: readonly string[], b: readonly string[]): { op: "=" | "-" | "+"; line: string }[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const x = a.slice(pre, a.length - suf);
  const y = b.slice(pre, b.length - suf);
  const out: { op: "=" | "-" | "+"; line: string }[] = a.slice(0, pre).map((line) => ({ op: "=" as const, line }));
  if (x.length * y.length > 25_000_000) {
    // too big to align: show it as a replacement
    for (const line of x) out.push({ op: "-", line });
    for (const line of y) out.push({ op: "+", line });
  } else {
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--)
      for (let j = y.length - 1; j >= 0; j--)
        lcs[i * w + j] =
          x[i] === y[j] ? (lcs[(i + 1) * w + j + 1] as number) + 1 : Math.max(lcs[(i + 1) * w + j] as number, lcs[i * w + j + 1] as number);
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        out.push({ op: "=", line: x[i] as string });
        i++;
        j++;
      } else if (j < y.length && (i === x.length || (lcs[i * w + j + 1] as number) >= (lcs[(i + 1) * w + j] as number)))
        out.push({ op: "+", line: y[j++] as string });
      else out.push({ op: "-", line: x[i++] as string });
    }
  }
  for (const line of a.slice(a.length - suf)) out.push({ op: "=", line });
  return out;
}
