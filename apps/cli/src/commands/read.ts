/** Commands that read: ls, log, show, diff, branches (CLI-13 … CLI-17), with the files (CLI-35). */
import { diffWorkspaces, STOP, type StopReason, TAG, workspaceDir, workspaceElement, workspaceFiles } from "@strata/agent";
import { DomError, diffTrees, type Op, select, type Tree, toXml } from "@strata/dom";
import { decodeEvent, materialize } from "@strata/engine";
import type { BranchInfo, EventId, EventMeta, Store } from "@strata/store";
import { type Address, checkEventText, eventOnBranch, findSession, parseAddress, resolveAddress } from "../address.ts";
import { type Args, type Command, exclusive, flag, int, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { type FileCounts, fileMarks, marksText } from "../file-marks.ts";
import { fileDiffs, fileDiffView } from "../filediff.ts";
import { ago, columns, time } from "../output.ts";
import { diffView, elementJson, summarizeOps, treeView } from "../render.ts";
import { byActivity, damageMessage, handleOf, handlesOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";
import { checkSelector } from "./check.ts";

/** A branch in every --json document (CLI-8). */
export function branchJson(b: BranchInfo): Record<string, unknown> {
  return { name: b.name, head: b.head, eventCount: b.headDepth, origin: b.origin, originEvent: b.originEvent, created: b.created };
}

/** How a run ended, from its stop reason. */
export type Outcome = "completed" | "stopped" | "failed" | "cancelled" | "open" | "idle" | "empty" | "damaged";
const OUTCOMES: Readonly<Record<StopReason, Outcome>> = {
  [STOP.completedByTool]: "completed",
  [STOP.envCompleted]: "completed",
  [STOP.endTurn]: "completed",
  [STOP.maxSteps]: "stopped",
  [STOP.budget]: "stopped",
  [STOP.contextOverflow]: "failed",
  [STOP.modelError]: "failed",
  [STOP.promptError]: "failed",
  [STOP.cancelled]: "cancelled",
};

/**
 * A session's status from its main head event alone (listing never materializes a tree): the
 * reason of the stop that event recorded; `open` when the head is the middle of a run (running
 * now, or waiting for `strata resume`); `idle` otherwise; `damaged` when the event cannot be read.
 */
function statusOf(store: Store, head: EventId): string {
  let d: ReturnType<typeof decodeEvent>;
  let e: ReturnType<Store["event"]>;
  try {
    e = store.event(head);
    if (e === undefined) return "damaged";
    d = decodeEvent(e);
  } catch {
    // an unreadable row or payload: the listing names it and goes on
    return "damaged";
  }
  if (d.kind !== "patch") return "idle";
  for (const op of d.ops) if (op[0] === "ins" && op[3].tag === TAG.stop) return op[3].attrs?.reason ?? "stopped";
  return /^(turn|call|resume)\./.test(e.label ?? "") ? "open" : "idle";
}

function outcomeOf(status: string): Outcome {
  return (
    (OUTCOMES as Readonly<Record<string, Outcome>>)[status] ??
    (status === "open" || status === "idle" || status === "empty" || status === "damaged" ? status : "stopped")
  );
}

function statusText(status: string, outcome: Outcome): string {
  switch (outcome) {
    case "completed":
    case "idle":
    case "empty":
      return status;
    case "stopped":
      return `${status} (resume continues)`;
    case "failed":
      return `failed: ${status} (resume retries)`;
    case "cancelled":
    case "open":
      return `${status} (resume it)`;
    case "damaged":
      return "damaged (strata verify)";
    default:
      return outcome satisfies never;
  }
}

export const ls: Command = {
  name: "ls",
  summary: "list sessions",
  usage: "strata ls [--all]",
  description:
    "Sessions, most recently active first: handle (what every command accepts as SESSION), title, branches, events on main, last activity and status. -q prints only the whole ids, one per line (for scripts).",
  examples: ["strata ls", "strata ls --all --json", "strata ls -q | head -1"],
  options: { all: { type: "boolean", description: "also list each session's branches, abandoned ones included" } },
  positionals: { min: 0, max: 0 },
  json: true,
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const now = ctx.now();
    const listed = byActivity(store);
    const handles = handlesOf(listed.map((r) => r.session.id));
    const rows = listed.map(({ session: s, activity }) => {
      const main = activity.branches.find((b) => b.name === "main") ?? activity.branches[0];
      const status = activity.damage.length > 0 ? "damaged" : main === undefined ? "empty" : statusOf(store, main.head);
      const damage = [...activity.damage];
      if (status === "damaged" && damage.length === 0 && main !== undefined)
        damage.push(
          `the database ${ctx.dbPath} is damaged: event ${main.head}, the head of branch "${main.name}" of session ${s.id}, cannot be read; \`strata verify\` lists the damage`,
        );
      return {
        id: s.id,
        handle: handles.get(s.id) ?? s.id,
        title: s.title,
        created: s.created,
        lastActivity: activity.last?.ts ?? s.created,
        lastLabel: activity.last?.label ?? null,
        eventCount: main?.headDepth ?? 0,
        status,
        outcome: outcomeOf(status),
        damage: damage.length === 0 ? null : damage.join("; "),
        branches: activity.branches.map(branchJson),
      };
    });
    // A damaged session is listed as such, the others as usual; the exit code says something is wrong.
    const damaged = rows.some((r) => r.damage !== null) ? 1 : undefined;
    for (const r of rows) if (r.damage !== null) ctx.out.note(ctx.out.paint("red", `warning: ${r.damage}`));
    if (ctx.out.json) {
      ctx.out.data({ sessions: rows });
      return damaged;
    }
    // for scripts: whole ids, which stay valid however many sessions come later
    if (ctx.out.quiet) {
      for (const r of rows) ctx.out.line(r.id);
      return damaged;
    }
    if (rows.length === 0) return void ctx.out.info(`no sessions in ${ctx.dbPath}; \`strata run\` starts one`);
    const table = [["SESSION", "TITLE", "BRANCHES", "EVENTS", "ACTIVE", "STATUS"].map((h) => ctx.out.paint("bold", h))];
    for (const r of rows) {
      const live = r.branches.filter((b) => b.origin !== "rewind").length;
      table.push([
        ctx.out.paint("cyan", r.handle),
        oneLine(r.title ?? "", 40),
        `${live}${r.branches.length > live ? ` (+${r.branches.length - live} kept)` : ""}`,
        String(r.eventCount),
        ago(r.lastActivity, now),
        statusText(r.status, r.outcome),
      ]);
      if (flag(args, "all"))
        for (const b of r.branches)
          table.push(["", ctx.out.paint("dim", `  @${oneLine(String(b.name), 40)}`), String(b.origin), String(b.eventCount), "", ""]);
    }
    for (const l of columns(table)) ctx.out.line(l);
    return damaged;
  },
};

function globMatcher(glob: string): (s: string) => boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\?]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return (s) => re.test(s);
}

export const log: Command = {
  name: "log",
  summary: "show a branch's events",
  usage: "strata log SESSION[@BRANCH] [--label GLOB] [--limit N]",
  description:
    "Events of a branch, oldest first: id, time, label, cause and a summary of the ops. Fork and rewind points are marked, and so is every event that changed files: files:+ADDED ~MODIFIED -DELETED.",
  examples: ["strata log @last", "strata log 6CPD71@alt --label 'tool.*' --limit 20", "strata log 6CPD71 --json"],
  options: {
    label: { type: "string", value: "GLOB", description: "only events whose label matches (* matches anything)" },
    limit: { type: "string", value: "N", description: "the last N events (default 100; 0 for all)" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    int(args, "limit", 100);
    parseAddress(args.positionals[0] as string);
  },
  run(ctx, args) {
    const limit = int(args, "limit", 100);
    const glob = str(args, "label");
    const store = ctx.store({ readonly: true });
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const match = glob === undefined ? () => true : globMatcher(glob);
    // Without a label filter only the last `limit` events are read (depths on a chain are 1 … the
    // head's): the cost is the page shown, not the session's length (CLI-37). A filter reads the
    // chain's metadata (no payloads) to find and count the matches.
    const headDepth = (store.eventMeta(a.event) as EventMeta).depth;
    let shown: EventMeta[];
    let total: number;
    if (glob === undefined && limit > 0) {
      shown = store.chainMeta(a.event, Math.max(0, headDepth - limit), limit);
      total = headDepth;
    } else {
      const all = store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER).filter((e) => match(e.label ?? ""));
      shown = limit === 0 ? all : all.slice(-limit);
      total = all.length;
    }
    const events = store.events(shown.map((e) => e.id));
    if (events.length !== shown.length)
      throw new CliError(
        `the database ${ctx.dbPath} is damaged: ${shown.length - events.length} events of the chain of ${a.session.id}@${a.branch.name} cannot be read; \`strata verify\` lists the damage`,
      );
    const marks = new Map<number, string[]>();
    for (const b of store.branches(a.session.id)) {
      if (b.originEvent === null || b.name === a.branch.name) continue;
      const list = marks.get(b.originEvent) ?? [];
      list.push(b.origin === "fork" ? `⑂ fork → ${b.name}` : `↶ rewound here; old head kept as ${b.name}`);
      marks.set(b.originEvent, list);
    }
    const ops = new Map<EventId, readonly Op[]>();
    let unreadable = false;
    const rows = events.map((e) => {
      let summary = "";
      try {
        const d = decodeEvent(e);
        summary = d.kind === "genesis" ? "session skeleton" : summarizeOps(d.ops);
        if (d.kind === "patch") ops.set(e.id, d.ops);
      } catch (err) {
        summary = `(unreadable — the database is damaged: ${(err as Error).message})`;
        unreadable = true;
      }
      return { id: e.id, depth: e.depth, ts: e.ts, label: e.label, by: e.by, kind: e.kind, summary, marks: marks.get(e.id) ?? [] };
    });
    // A damaged event is shown as such, and the chain is not folded past it.
    const files = unreadable ? new Map<EventId, FileCounts>() : fileMarks(store, a.event, shown, ops);
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        eventCount: total,
        events: rows.map((r) => ({ ...r, fileChanges: files.get(r.id) ?? null })),
      });
    if (shown.length < total) ctx.out.info(ctx.out.paint("dim", `… ${total - shown.length} earlier events (--limit 0 shows all)`));
    for (const r of rows) {
      const label = oneLine(r.label ?? r.kind, 40);
      const changed = files.get(r.id);
      ctx.out.line(
        `${ctx.out.paint("yellow", String(r.id).padStart(6))} ${ctx.out.paint("dim", time(r.ts))} ${ctx.out.paint("cyan", label.padEnd(14))} ${r.by ? ctx.out.paint("dim", `by ${oneLine(r.by, 40)} `) : ""}${changed ? `${ctx.out.paint("magenta", marksText(changed))} ` : ""}${oneLine(r.summary, 400)}`,
      );
      for (const m of r.marks) ctx.out.line(`       ${ctx.out.paint("magenta", oneLine(m, 200))}`);
    }
    return undefined;
  },
};

/** `S@EVENT --at EVENT` names the event twice: refuse it. */
function checkAtOnce(args: Args): void {
  const { at, back } = parseAddress(args.positionals[0] as string);
  checkEventText("at", str(args, "at"));
  if (str(args, "at") !== undefined && ((at !== undefined && /^[0-9]+$/.test(at)) || back > 0))
    throw new UsageError(`${args.positionals[0]} names an event already; give either SESSION@EVENT (or SESSION~N) or --at EVENT, not both`);
}

export const show: Command = {
  name: "show",
  summary: "show the tree at any event",
  usage: "strata show SESSION[@BRANCH|@EVENT][~N] [--at EVENT] [--select CSS] [--xml | --tree] [--depth N] [--files]",
  description:
    "The materialized tree at an event (default: the branch head), or only the elements a selector matches. --files lists the workspace the event records instead: path, mode, size and short hash of every file, and the branch's working directory.",
  examples: [
    "strata show @last",
    "strata show 6CPD71 --at 57 --select 'call[status=running]'",
    "strata show 6CPD71@alt~3 --xml",
    "strata show 6CPD71 --json",
    "strata show 6CPD71@40 --files",
  ],
  options: {
    at: { type: "string", value: "EVENT", description: "an event id, or head~N for N events before the head" },
    select: { type: "string", value: "CSS", description: "only the elements matching this selector" },
    xml: { type: "boolean", description: "canonical XML (ids included)" },
    tree: { type: "boolean", description: "an indented view (the default)" },
    depth: { type: "string", value: "N", description: "levels to show in the tree view (default all)" },
    files: { type: "boolean", description: "the workspace at the event: path, mode, size and hash of each file" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    checkAtOnce(args);
    exclusive(args, "xml", "tree");
    exclusive(args, "xml", "depth");
    for (const o of ["select", "xml", "tree", "depth"]) exclusive(args, "files", o);
    int(args, "depth", 0);
    checkSelector("select", str(args, "select"));
  },
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const atText = str(args, "at");
    const event = atText === undefined ? a.event : eventOnBranch(store, a.branch, atText);
    const tree = materialize(store, event);
    if (flag(args, "files")) return showFiles(ctx, a, event, tree);
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
        matchCount: css === undefined ? null : roots.length,
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

/** `show --files`: the workspace an event records (CLI-35). */
function showFiles(ctx: Context, a: Address, event: EventId, tree: Tree): undefined {
  const recorded = workspaceElement(tree) !== undefined;
  const files = [...workspaceFiles(tree).values()]
    .map(({ path, mode, size, hash }) => ({ path, mode, size, hash }))
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const dir = recorded ? (workspaceDir(tree) ?? null) : null;
  if (ctx.out.json)
    return void ctx.out.data({ session: a.session.id, branch: a.branch.name, event, recorded, dir, fileCount: files.length, files });
  if (!recorded) {
    ctx.out.note(
      `event ${event} records no workspace yet: files are recorded from the first tool call that may write (write_file, edit_file, run)`,
    );
    return undefined;
  }
  if (ctx.out.quiet) {
    for (const f of files) ctx.out.line(f.path);
    return undefined;
  }
  ctx.out.info(
    ctx.out.paint("dim", `workspace at event ${event}${dir === null ? "" : ` (the branch works in ${dir})`}: ${files.length} files`),
  );
  const table = files.map((f) => [f.mode, String(f.size), ctx.out.paint("dim", f.hash.slice(0, 12)), f.path]);
  for (const l of columns(table)) ctx.out.line(l);
  return undefined;
}

export const diff: Command = {
  name: "diff",
  summary: "compare two events or branches, files included",
  usage: "strata diff A B",
  description: [
    "The structural difference from A to B (each SESSION@EVENT, SESSION@BRANCH or SESSION@BRANCH~N): elements added, removed, changed and moved, with before and after.",
    "Then the files: each file added, modified or deleted between the workspaces A and B record, with a unified diff for a text file and sizes and hashes for anything else (binary, larger than 256 KiB, a symlink).",
  ].join("\n"),
  examples: ["strata diff 6CPD71@main 6CPD71@alt", "strata diff @last@40 @last@57 --json"],
  options: {},
  positionals: { min: 2, max: 2 },
  json: true,
  check(args) {
    for (const p of args.positionals) parseAddress(p);
  },
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const b = resolveAddress(store, args.positionals[1] as string, ctx.branch);
    if (a.session.id !== b.session.id)
      throw new CliError("A and B must be events of one session (ids are only comparable within a session)");
    const ta = materialize(store, a.event);
    const tb = materialize(store, b.event);
    const d = diffTrees(ta, tb);
    // Files are compared only where both sides record them: a side before its baseline knows none.
    const recorded = workspaceElement(ta) !== undefined && workspaceElement(tb) !== undefined;
    const files = recorded ? fileDiffs(store, diffWorkspaces(ta, tb)) : [];
    if (ctx.out.json)
      return void ctx.out.data({ session: a.session.id, from: a.event, to: b.event, diff: d, filesRecorded: recorded, files });
    ctx.out.info(
      ctx.out.paint("bold", `${handleOf(store, a.session.id)}: event ${a.event} (${a.branch.name}) → event ${b.event} (${b.branch.name})`),
    );
    const lines = diffView(ctx.out, d, ta, tb);
    if (lines.length === 0) ctx.out.info("no difference");
    for (const l of lines) ctx.out.line(l);
    if (!recorded) {
      const none = [workspaceElement(ta) === undefined ? a.event : undefined, workspaceElement(tb) === undefined ? b.event : undefined]
        .filter((e) => e !== undefined)
        .join(" and ");
      if (workspaceElement(ta) !== undefined || workspaceElement(tb) !== undefined)
        ctx.out.note(`files: event ${none} records no workspace yet, so the files are not compared`);
      return undefined;
    }
    ctx.out.info(ctx.out.paint("bold", files.length === 0 ? "files: no difference" : `files: ${files.length} changed`));
    for (const l of fileDiffView(ctx.out, files)) ctx.out.line(l);
    return undefined;
  },
};

export const branches: Command = {
  name: "branches",
  summary: "list a session's branches",
  usage: "strata branches SESSION",
  description: "Every branch of a session with its head, length and origin (a fork, or a head kept by a rewind). -q prints the names only.",
  examples: ["strata branches @last", "strata branches 6CPD71 --json"],
  options: {},
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const s = findSession(store, args.positionals[0] as string);
    const list = store.branches(s.id);
    const missing = list.filter((b) => store.eventMeta(b.head)?.session !== s.id);
    for (const b of missing)
      ctx.out.note(ctx.out.paint("red", `warning: ${damageMessage(s.id, { branch: b.name, head: b.head }, ctx.dbPath)}`));
    if (ctx.out.json) return void ctx.out.data({ session: s.id, branches: list.map(branchJson) });
    if (ctx.out.quiet) {
      for (const b of list) ctx.out.line(b.name);
      return missing.length > 0 ? 1 : undefined;
    }
    const table = [["BRANCH", "HEAD", "EVENTS", "ORIGIN", "CREATED"].map((h) => ctx.out.paint("bold", h))];
    for (const b of list)
      table.push([
        ctx.out.paint(b.origin === "rewind" ? "dim" : "cyan", b.name),
        missing.includes(b) ? `${b.head} (missing)` : String(b.head),
        String(b.headDepth),
        b.origin === "genesis" ? "-" : `${b.origin} at ${b.originEvent}`,
        time(b.created),
      ]);
    for (const l of columns(table)) ctx.out.line(l);
    return missing.length > 0 ? 1 : undefined;
  },
};
