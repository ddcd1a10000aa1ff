/**
 * The main job until the `strata` CLI exists: builds a session tree from ops the way an agent
 * would (a todo list and two turns), prints its canonical XML, "rewinds" to an earlier version by
 * applying the inverse patch, and prints the structural diff between the two.
 *
 * Usage: pnpm demo [--json]
 */
import {
  applyPatch,
  diffTrees,
  draft,
  invertPatch,
  nodeId,
  type Op,
  select,
  skeletonTree,
  type Tree,
  type TreeDiff,
  toSnapshot,
  toXml,
} from "@strata/dom";

const json = process.argv.includes("--json");
const color = !json && process.stdout.isTTY && !process.env.NO_COLOR && !process.argv.includes("--no-color");
const paint = (code: string, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);

const META = nodeId(2);
const BODY = nodeId(3);
const genesis = skeletonTree({ tag: "session", children: [{ tag: "meta" }, { tag: "body" }] });

// Each "event" is one patch, recorded as plain ops: the only thing strata ever persists.
const events: Array<{ label: string; ops: Op[] }> = [];
let tree: Tree = genesis;
const commit = (label: string, recipe: Parameters<typeof draft>[1]) => {
  const result = draft(tree, recipe, { monotonic: true });
  events.push({ label, ops: result.ops });
  tree = result.tree;
};

commit("todo.write", (d) => {
  const todo = d.appendChild(META, { tag: "todo" });
  for (const text of ["read the spec", "write the tests", "ship"]) d.appendChild(todo, { tag: "item", attrs: { status: "pending" }, text });
});
commit("turn.start", (d) => {
  const turn = d.appendChild(BODY, { tag: "turn", attrs: { n: "1" } });
  d.appendChild(turn, { tag: "user", text: "Please read DESIGN.md" });
  const call = d.appendChild(turn, { tag: "call", attrs: { tool: "read_file", status: "running" } });
  d.appendChild(call, { tag: "args", text: '{"path":"DESIGN.md"}' });
});
const checkpoint = tree;
commit("tool.result", (d) => {
  const call = d.selectOne("call[status=running]");
  if (call === undefined) throw new Error("no running call");
  d.set(call.id, "status", "executed");
  d.appendChild(call.id, { tag: "output", text: "# strata — design contract\n…" });
  const first = d.selectOne("todo item[status=pending]");
  if (first) d.set(first.id, "status", "completed");
});

const open = select(tree, "todo item[status!=completed]").length;
// Rewind: undo the last event exactly (in strata proper, rewind moves a branch head instead).
const last = events[events.length - 1] as { ops: Op[] };
const rewound = applyPatch(tree, invertPatch(checkpoint, last.ops));
const diff = diffTrees(rewound, tree);

if (json) {
  console.log(
    JSON.stringify({
      events,
      xml: toXml(tree),
      openItems: open,
      rewoundEqualsCheckpoint: toSnapshot(rewound) === toSnapshot(checkpoint),
      diff,
    }),
  );
} else {
  console.log(paint("1", `strata demo: ${events.length} events, ${tree.size} elements, high-water mark ${tree.hwm}`));
  for (const [i, e] of events.entries())
    console.log(`  ${paint("2", `#${i + 1}`)} ${paint("36", e.label.padEnd(12))} ${JSON.stringify(e.ops)}`);
  console.log(paint("1", "\ntree at the head:"));
  console.log(toXml(tree));
  console.log(`\n- ${open} open items   (template: {{ count(select("todo item[status!=completed]")) }})`);
  console.log(paint("1", "\nrewound one event; the tree now equals the checkpoint:"), toSnapshot(rewound) === toSnapshot(checkpoint));
  console.log(paint("1", "\ndiff from the rewound tree to the head:"));
  printDiff(diff);
}

function printDiff(d: TreeDiff): void {
  for (const a of d.added) console.log(paint("32", `  + <${a.node.tag}> ${a.id} under ${a.at.parent}`));
  for (const r of d.removed) console.log(paint("31", `  - <${r.node.tag}> ${r.id} from ${r.at.parent}`));
  for (const c of d.attrs) console.log(paint("33", `  ~ ${c.id} @${c.name}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`));
  for (const t of d.text) console.log(paint("33", `  ~ ${t.id} text: ${JSON.stringify(t.before)} → ${JSON.stringify(t.after)}`));
  for (const m of d.moved) console.log(paint("35", `  ↷ ${m.id}: ${m.from.parent} → ${m.to.parent}`));
}
