/** Commands that read: ls, log, show, diff, branches (CLI-13 … CLI-17), with the files (CLI-35). */
import { diffWorkspaces, workspaceDir, workspaceElement, workspaceFiles } from "@strata/agent";
import { DomError, diffTrees, type Op, select, type Tree, toXml } from "@strata/dom";
import { decodeEvent, loadTree, materialize } from "@strata/engine";
import type { AsyncStore, BranchInfo, EventId, EventMeta, Store } from "@strata/store";
import { type Address, checkEventText, eventOnBranch, findSession, parseAddress, resolveAddress } from "../address.ts";
import { type Args, type CommandImpl, exclusive, flag, int, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { type FileCounts, fileMarks, marksText } from "../file-marks.ts";
import { fileDiffsOn, fileDiffView } from "../filediff.ts";
import { columns, time } from "../output.ts";
import { diffView, elementJson, summarizeOps, treeView } from "../render.ts";
import { checkSelector } from "../selectors.ts";
import { damageMessage, handleOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";
import { filesAt } from "../workspace.ts";
import { branchJson } from "./ls.ts";

function globMatcher(glob: string): (s: string) => boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\?]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return (s) => re.test(s);
}

export const log: CommandImpl = {
  check(args) {
    int(args, "limit", 100);
    parseAddress(args.positionals[0] as string);
  },
  async run(ctx, args) {
    const limit = int(args, "limit", 100);
    const glob = str(args, "label");
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const match = glob === undefined ? () => true : globMatcher(glob);
    // Without a label filter only the last `limit` events are read (depths on a chain are 1 … the
    // head's): the cost is the page shown, not the session's length (CLI-37). A filter reads the
    // chain's metadata (no payloads) to find and count the matches.
    const headDepth = ((await store.eventMeta(a.event)) as EventMeta).depth;
    let shown: EventMeta[];
    let total: number;
    if (glob === undefined && limit > 0) {
      shown = await store.chainMeta(a.event, Math.max(0, headDepth - limit), limit);
      total = headDepth;
    } else {
      const all = (await store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER)).filter((e) => match(e.label ?? ""));
      shown = limit === 0 ? all : all.slice(-limit);
      total = all.length;
    }
    const events = await store.events(shown.map((e) => e.id));
    if (events.length !== shown.length)
      throw new CliError(
        `the database ${ctx.dbPath} is damaged: ${shown.length - events.length} events of the chain of ${a.session.id}@${a.branch.name} cannot be read; \`strata verify\` lists the damage`,
      );
    const marks = new Map<number, string[]>();
    for (const b of await store.branches(a.session.id)) {
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
    const files = unreadable ? new Map<EventId, FileCounts>() : await fileMarks(store, a.event, shown, ops);
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

export const show: CommandImpl = {
  check(args) {
    checkAtOnce(args);
    exclusive(args, "xml", "tree");
    exclusive(args, "xml", "depth");
    for (const o of ["select", "xml", "tree", "depth"]) exclusive(args, "files", o);
    int(args, "depth", 0);
    checkSelector("select", str(args, "select"));
  },
  async run(ctx, args) {
    // On either port (decision 0036); over the network the tree is fetched whole (decision 0037).
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const atText = str(args, "at");
    const event = atText === undefined ? a.event : await eventOnBranch(store, a.branch, atText);
    const at = await materialize(store, event);
    const tree = ctx.remote ? await loadTree(at) : at;
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

export const diff: CommandImpl = {
  check(args) {
    for (const p of args.positionals) parseAddress(p);
  },
  async run(ctx, args) {
    // On either port; on PostgreSQL both trees are loaded whole first (decision 0037).
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const b = await resolveAddress(store, args.positionals[1] as string, ctx.branch);
    if (a.session.id !== b.session.id)
      throw new CliError("A and B must be events of one session (ids are only comparable within a session)");
    const whole = async (t: Tree) => (ctx.remote ? await loadTree(t) : t);
    const ta = await whole(await materialize(store, a.event));
    const tb = await whole(await materialize(store, b.event));
    const d = diffTrees(ta, tb);
    // Files are compared where both sides know them: a side before its line's baseline knows them by
    // that baseline (no tool that writes had run, so the files were those it recorded: filesAt), on
    // the line to the other side when it is a descendant, else (or when that line has none) on the
    // side's own branch.
    const known = async (x: typeof a, y: typeof a, t: Tree) =>
      ((await store.isAncestor(x.event, y.event)) ? await filesAt(store, y.event, x.event, t) : undefined) ??
      (await filesAt(store, x.branch.head, x.event, t));
    const fa = await known(a, b, ta);
    const fb = await known(b, a, tb);
    const recorded = fa !== undefined && fb !== undefined;
    const files = recorded ? await fileDiffsOn(store, diffWorkspaces(fa.tree, fb.tree)) : [];
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        from: a.event,
        to: b.event,
        diff: d,
        filesRecorded: recorded,
        filesAt: recorded ? { from: fa.event, to: fb.event } : null,
        files,
      });
    ctx.out.info(
      ctx.out.paint(
        "bold",
        `${await handleOf(store, a.session.id)}: event ${a.event} (${a.branch.name}) → event ${b.event} (${b.branch.name})`,
      ),
    );
    const lines = diffView(ctx.out, d, ta, tb);
    if (lines.length === 0) ctx.out.info("no difference");
    for (const l of lines) ctx.out.line(l);
    if (!recorded) {
      // one side knows its files and the other none (its line recorded no workspace): say which
      if (fa !== undefined || fb !== undefined)
        ctx.out.note(`files: event ${fa === undefined ? a.event : b.event} records no workspace, so the files are not compared`);
      return undefined;
    }
    for (const [side, f] of [
      [a.event, fa.event],
      [b.event, fb.event],
    ] as const)
      if (side !== f) ctx.out.note(ctx.out.paint("dim", `files: event ${side} records none yet; its files are the baseline's, event ${f}`));
    ctx.out.info(ctx.out.paint("bold", files.length === 0 ? "files: no difference" : `files: ${files.length} changed`));
    for (const l of fileDiffView(ctx.out, files)) ctx.out.line(l);
    return undefined;
  },
};

/**
 * The branches as a tree of forks, in the order to print them: each branch under the one it came
 * from — the first-created other branch whose line holds its origin event — children by creation,
 * with the prefix that draws the tree (`├─ `, `└─ `, `│  `). Branches whose parent cannot be told
 * (a damaged head, no origin event) are roots.
 */
async function branchTree(
  store: Store | AsyncStore,
  list: readonly BranchInfo[],
  missing: readonly BranchInfo[],
): Promise<{ branch: BranchInfo; prefix: string }[]> {
  const byAge = [...list].sort((x, y) => x.created - y.created || x.name.localeCompare(y.name));
  const children = new Map<string, BranchInfo[]>();
  const roots: BranchInfo[] = [];
  for (const b of byAge) {
    let parent: BranchInfo | undefined;
    if (b.originEvent !== null && b.origin !== "genesis")
      for (const o of byAge) {
        if (o === b || o.created > b.created || missing.includes(o)) continue;
        if (await store.isAncestor(b.originEvent, o.head)) {
          parent = o;
          break;
        }
      }
    if (parent === undefined) roots.push(b);
    else children.set(parent.name, [...(children.get(parent.name) ?? []), b]);
  }
  const out: { branch: BranchInfo; prefix: string }[] = [];
  const walk = (b: BranchInfo, lead: string, own: string): void => {
    out.push({ branch: b, prefix: own });
    const kids = children.get(b.name) ?? [];
    kids.forEach((k, i) => {
      const last = i === kids.length - 1;
      walk(k, `${lead}${last ? "   " : "│  "}`, `${lead}${last ? "└─ " : "├─ "}`);
    });
  };
  for (const r of roots) walk(r, "", "");
  return out;
}

export const branches: CommandImpl = {
  async run(ctx, args) {
    const store = await ctx.reader();
    const s = await findSession(store, args.positionals[0] as string);
    const list = await store.branches(s.id);
    const missing: typeof list = [];
    for (const b of list) if ((await store.eventMeta(b.head))?.session !== s.id) missing.push(b);
    for (const b of missing)
      ctx.out.note(ctx.out.paint("red", `warning: ${damageMessage(s.id, { branch: b.name, head: b.head }, ctx.dbPath)}`));
    if (ctx.out.json) return void ctx.out.data({ session: s.id, branches: list.map(branchJson) });
    if (ctx.out.quiet) {
      for (const b of list) ctx.out.line(b.name);
      return missing.length > 0 ? 1 : undefined;
    }
    const table = [["BRANCH", "HEAD", "EVENTS", "ORIGIN", "CREATED"].map((h) => ctx.out.paint("bold", h))];
    for (const { branch: b, prefix } of await branchTree(store, list, missing))
      table.push([
        `${ctx.out.paint("dim", prefix)}${ctx.out.paint(b.origin === "rewind" ? "dim" : "cyan", b.name)}`,
        missing.includes(b) ? `${b.head} (missing)` : String(b.head),
        String(b.headDepth),
        b.origin === "genesis" ? "-" : `${b.origin} at ${b.originEvent}`,
        time(b.created),
      ]);
    for (const l of columns(table)) ctx.out.line(l);
    return missing.length > 0 ? 1 : undefined;
  },
};
