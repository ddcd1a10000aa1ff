/** `strata ls` (CLI-4, CLI-8): sessions by last activity, from the store alone (no tree is materialized). */
import { STOP, type StopReason, TAG } from "@strata/agent";
import { decodeEvent, type Port } from "@strata/engine";
import type { BranchInfo, EventId, SessionInfo, StoredEvent } from "@strata/store";
import { type ArchivedFilter, archivedAt, shown } from "../archive.ts";
import { type CommandImpl, exclusive, flag, int } from "../command.ts";
import { ago, columns } from "../output.ts";
import { atOnce, byActivity, handlesOf, mainOf, recentActivity } from "../sessions.ts";
import { oneLine } from "../terminal.ts";

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
export async function statusOf(store: Port, head: EventId): Promise<string> {
  let d: ReturnType<typeof decodeEvent>;
  let e: StoredEvent | undefined;
  try {
    e = await store.event(head);
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

/** A status from the head event, with its outcome. */
export function withOutcome(status: string): [string, Outcome] {
  const outcome =
    (OUTCOMES as Readonly<Record<string, Outcome>>)[status] ??
    (status === "open" || status === "idle" || status === "damaged" ? status : "stopped");
  return [status, outcome];
}

export function statusText(status: string, outcome: Outcome): string {
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

export const ls: CommandImpl = {
  check(args) {
    exclusive(args, "all", "archived");
  },
  async run(ctx, args) {
    const limit = int(args, "limit", 0);
    const store = await ctx.reader();
    const now = ctx.now();
    // Archived sessions (CLI-48) are left out unless --archived (only them) or --all (every one).
    const archived: ArchivedFilter = flag(args, "all") ? "show" : flag(args, "archived") ? "only" : "hide";
    const listed =
      limit > 0 ? await recentActivity(store, limit, archived) : (await byActivity(store)).filter((r) => shown(r.session, archived));
    // Handles are unique among all the sessions, listed or not (one narrow read of their ids).
    const handles = handlesOf(limit > 0 ? (await store.listSessions()).map((s) => s.id) : listed.map((r) => r.session.id));
    // an imported recording (IM-1) has no run to resume: its status says where it came from
    const importedOf = (s: SessionInfo) => (s.metadata as { import?: { from?: unknown } }).import;
    // The status of a session with a run reads its main head's event (over the network, a few at a time).
    const read = listed.filter(({ session: s, activity }) => activity.damage.length === 0 && importedOf(s) === undefined);
    const heads = read.flatMap(({ session: s, activity }) => {
      const main = mainOf(activity);
      return main === undefined ? [] : [[s.id, main.head] as const];
    });
    const found = await atOnce(heads, ([, head]) => statusOf(store, head));
    const statuses = new Map(heads.map(([id], k) => [id, found[k] as string]));
    const rows = [];
    for (const { session: s, activity } of listed) {
      const main = mainOf(activity);
      const imported = importedOf(s);
      const [status, outcome]: [string, Outcome] =
        activity.damage.length > 0
          ? ["damaged", "damaged"]
          : main === undefined
            ? ["empty", "empty"]
            : imported !== undefined
              ? [`imported from ${String(imported.from)}`, "idle"]
              : withOutcome(statuses.get(s.id) ?? "damaged");
      const damage = [...activity.damage];
      if (status === "damaged" && damage.length === 0 && main !== undefined)
        damage.push(
          `the database ${ctx.dbPath} is damaged: event ${main.head}, the head of branch "${main.name}" of session ${s.id}, cannot be read; \`strata verify\` lists the damage`,
        );
      rows.push({
        id: s.id,
        handle: handles.get(s.id) ?? s.id,
        title: s.title,
        archived: archivedAt(s),
        created: s.created,
        lastActivity: activity.last?.ts ?? s.created,
        lastLabel: activity.last?.label ?? null,
        eventCount: main?.headDepth ?? 0,
        status,
        outcome,
        damage: damage.length === 0 ? null : damage.join("; "),
        branches: activity.branches.map(branchJson),
      });
    }
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
        r.archived === null ? oneLine(r.title ?? "", 40) : `${ctx.out.paint("dim", "[archived]")} ${oneLine(r.title ?? "", 29)}`,
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
