/** Commands that read: ls, log, show, diff, branches (CLI-13 … CLI-17). */
import { DomError, diffTrees, select, toXml } from "@strata/dom";
import { decodeEvent, materialize } from "@strata/engine";
import type { EventId, EventMeta, Store } from "@strata/store";
import { eventOnBranch, findSession, resolveAddress } from "../address.ts";
import { type Command, flag, int, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { ago, columns, time } from "../output.ts";
import { diffView, elementJson, oneLine, summarizeOps, treeView } from "../render.ts";

export const ls: Command = {
  name: "ls",
  summary: "list sessions",
  usage: "strata ls [--all]",
  description: "Sessions, newest first, with title, branches, events on main, last activity and the last thing recorded.",
  examples: ["strata ls", "strata ls --all --json"],
  options: { all: { type: "boolean", description: "also list each session's branches, abandoned ones included" } },
  positionals: { min: 0, max: 0 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const now = ctx.now();
    const rows = store.listSessions().map((s) => {
      const branches = store.branches(s.id);
      const main = branches.find((b) => b.name === "main") ?? branches[0];
      const last = branches.map((b) => store.eventMeta(b.head) as EventMeta).reduce((x, y) => (y.ts > x.ts ? y : x));
      const status = main === undefined ? "empty" : statusOf(store, main.head);
      return {
        id: s.id,
        title: s.title,
        created: s.created,
        branches: branches.map((b) => ({ name: b.name, head: b.head, events: b.headDepth, origin: b.origin })),
        events: main?.headDepth ?? 0,
        lastActivity: last.ts,
        lastLabel: last.label,
        status,
      };
    });
    if (ctx.out.json) return void ctx.out.data({ sessions: rows });
    if (rows.length === 0) return void ctx.out.line(`no sessions in ${ctx.dbPath}; \`strata run\` starts one`);
    const table = [["SESSION", "TITLE", "BRANCHES", "EVENTS", "ACTIVE", "STATUS"].map((h) => ctx.out.paint("bold", h))];
    for (const r of rows) {
      const live = r.branches.filter((b) => b.origin !== "rewind").length;
      table.push([
        ctx.out.paint("cyan", r.id),
        oneLine(r.title ?? "", 40),
        `${live}${r.branches.length > live ? ` (+${r.branches.length - live} kept)` : ""}`,
        String(r.events),
        ago(r.lastActivity, now),
        r.status,
      ]);
      if (flag(args, "all"))
        for (const b of r.branches) table.push(["", ctx.out.paint("dim", `  @${b.name}`), b.origin, String(b.events), "", ""]);
    }
    for (const l of columns(table)) ctx.out.line(l);
    return undefined;
  },
};

export const log: Command = {
  name: "log",
  summary: "show a branch's events",
  usage: "strata log SESSION[@BRANCH] [--label GLOB] [--limit N]",
  description: "Events of a branch, oldest first: id, time, label, cause and a summary of the ops. Fork and rewind points are marked.",
  examples: ["strata log 01JD4", "strata log 01JD4@try-2 --label 'tool.*' --limit 20", "strata log 01JD4 --json"],
  options: {
    label: { type: "string", value: "GLOB", description: "only events whose label matches (* matches anything)" },
    limit: { type: "string", value: "N", description: "the last N events (default 100; 0 for all)" },
  },
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const limit = int(args, "limit", 100);
    const glob = str(args, "label");
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const match = glob === undefined ? () => true : globMatcher(glob);
    const all = store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER).filter((e) => match(e.label ?? ""));
    const shown = limit === 0 ? all : all.slice(-limit);
    const events = store.events(shown.map((e) => e.id));
    const marks = new Map<number, string[]>();
    for (const b of store.branches(a.session.id)) {
      if (b.originEvent === null || b.name === a.branch.name) continue;
      const list = marks.get(b.originEvent) ?? [];
      list.push(b.origin === "fork" ? `⑂ fork → ${b.name}` : `↶ rewound here; old head kept as ${b.name}`);
      marks.set(b.originEvent, list);
    }
    const rows = events.map((e) => {
      let summary = "";
      try {
        const d = decodeEvent(e);
        summary = d.kind === "genesis" ? "session skeleton" : summarizeOps(d.ops);
      } catch (err) {
        summary = `(unreadable: ${(err as Error).message})`;
      }
      return { id: e.id, depth: e.depth, ts: e.ts, label: e.label, by: e.by, kind: e.kind, summary, marks: marks.get(e.id) ?? [] };
    });
    if (ctx.out.json) return void ctx.out.data({ session: a.session.id, branch: a.branch.name, total: all.length, events: rows });
    if (shown.length < all.length)
      ctx.out.line(ctx.out.paint("dim", `… ${all.length - shown.length} earlier events (--limit 0 shows all)`));
    for (const r of rows) {
      ctx.out.line(
        `${ctx.out.paint("yellow", String(r.id).padStart(6))} ${ctx.out.paint("dim", time(r.ts))} ${ctx.out.paint("cyan", (r.label ?? r.kind).padEnd(14))} ${r.by ? ctx.out.paint("dim", `by ${r.by} `) : ""}${r.summary}`,
      );
      for (const m of r.marks) ctx.out.line(`       ${ctx.out.paint("magenta", m)}`);
    }
    return undefined;
  },
};

/**
 * A session's status from its main head event alone (listing never materializes a tree): the
 * reason of the stop that event recorded; `open` when the head is the middle of a run (running
 * now, or waiting for `strata resume`); `idle` otherwise.
 */
function statusOf(store: Store, head: EventId): string {
  const e = store.event(head);
  if (e === undefined) return "unreadable";
  let d: ReturnType<typeof decodeEvent>;
  try {
    d = decodeEvent(e);
  } catch {
    return "unreadable";
  }
  if (d.kind !== "patch") return "idle";
  for (const op of d.ops) if (op[0] === "ins" && op[3].tag === "stop") return op[3].attrs?.reason ?? "stopped";
  return /^(turn|call|resume)\./.test(e.label ?? "") ? "open (resume it)" : "idle";
}

function globMatcher(glob: string): (s: string) => boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\?]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return (s) => re.test(s);
}

export const show: Command = {
  name: "show",
  summary: "show the tree at any event",
  usage: "strata show SESSION[@BRANCH|@EVENT][~N] [--at EVENT] [--select CSS] [--xml | --tree] [--depth N]",
  description: "The materialized tree at an event (default: the branch head), or only the elements a selector matches.",
  examples: [
    "strata show 01JD4",
    "strata show 01JD4 --at 57 --select 'call[status=running]'",
    "strata show 01JD4@try-2~3 --xml",
    "strata show 01JD4 --json",
  ],
  options: {
    at: { type: "string", value: "EVENT", description: "an event id, or ~N for N events before the head" },
    select: { type: "string", value: "CSS", description: "only the elements matching this selector" },
    xml: { type: "boolean", description: "canonical XML (ids included)" },
    tree: { type: "boolean", description: "an indented view (the default)" },
    depth: { type: "string", value: "N", description: "levels to show in the tree view (default all)" },
  },
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const atText = str(args, "at");
    const event = atText === undefined ? a.event : eventOnBranch(store, a.branch, atText);
    const tree = materialize(store, event);
    const css = str(args, "select");
    let roots = [tree.root];
    if (css !== undefined) {
      try {
        roots = select(tree, css);
      } catch (e) {
        if (e instanceof DomError) throw new UsageError(e.message);
        throw e;
      }
    }
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        event,
        matches: css === undefined ? undefined : roots.length,
        elements: roots.map(elementJson),
      });
    if (css !== undefined && roots.length === 0) ctx.out.note(`no element matches ${css} at event ${event}`);
    const depth = str(args, "depth") === undefined ? Number.POSITIVE_INFINITY : int(args, "depth", 0);
    for (const r of roots) {
      if (flag(args, "xml")) ctx.out.line(css === undefined ? toXml(tree) : toXml(tree, { root: r.id }));
      else for (const l of treeView(ctx.out, r, depth)) ctx.out.line(l);
    }
    return undefined;
  },
};

export const diff: Command = {
  name: "diff",
  summary: "compare two events or branches",
  usage: "strata diff A B",
  description:
    "The structural difference from A to B (each SESSION@EVENT, SESSION@BRANCH or SESSION@BRANCH~N): elements added, removed, changed and moved, with before and after.",
  examples: ["strata diff 01JD4@main 01JD4@try-2", "strata diff 01JD4@40 01JD4@57 --json"],
  options: {},
  positionals: { min: 2, max: 2 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const b = resolveAddress(store, args.positionals[1] as string, ctx.branch);
    if (a.session.id !== b.session.id)
      throw new CliError("A and B must be events of one session (ids are only comparable within a session)");
    const ta = materialize(store, a.event);
    const tb = materialize(store, b.event);
    const d = diffTrees(ta, tb);
    if (ctx.out.json) return void ctx.out.data({ session: a.session.id, from: a.event, to: b.event, diff: d });
    ctx.out.line(ctx.out.paint("bold", `${a.session.id}: event ${a.event} (${a.branch.name}) → event ${b.event} (${b.branch.name})`));
    const lines = diffView(ctx.out, d, ta, tb);
    if (lines.length === 0) ctx.out.line("no difference");
    for (const l of lines) ctx.out.line(l);
    return undefined;
  },
};

export const branches: Command = {
  name: "branches",
  summary: "list a session's branches",
  usage: "strata branches SESSION",
  description: "Every branch of a session with its head, length and origin (a fork, or a head kept by a rewind).",
  examples: ["strata branches 01JD4", "strata branches 01JD4 --json"],
  options: {},
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const s = findSession(store, args.positionals[0] as string);
    const list = store.branches(s.id);
    if (ctx.out.json) return void ctx.out.data({ session: s.id, branches: list });
    const table = [["BRANCH", "HEAD", "EVENTS", "ORIGIN", "CREATED"].map((h) => ctx.out.paint("bold", h))];
    for (const b of list)
      table.push([
        ctx.out.paint(b.origin === "rewind" ? "dim" : "cyan", b.name),
        String(b.head),
        String(b.headDepth),
        b.origin === "genesis" ? "-" : `${b.origin} at ${b.originEvent}`,
        time(b.created),
      ]);
    for (const l of columns(table)) ctx.out.line(l);
    return undefined;
  },
};
