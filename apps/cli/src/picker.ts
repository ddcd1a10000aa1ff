/**
 * The session picker (CLI-43): `strata resume` with no SESSION and `strata chat --resume` on a
 * terminal. The most recently active sessions first, each with its title, branch count, last
 * activity, status and workspace directory; typing filters them (on any of those, the handle and
 * the id). The list is read once, from the store's ranking (no tree is materialized: the status
 * is the main head's event, the workspace the one the first run recorded); the prompt itself is
 * @inquirer/search, not terminal handling of our own.
 */
import { homedir } from "node:os";
import { emitKeypressEvents } from "node:readline";
import { LABEL, readInputs } from "@strata/agent";
import type { Port } from "@strata/engine";
import { type EventId, isAsyncStore, type SessionInfo } from "@strata/store";
import { statusOf, statusText, withOutcome } from "./commands/ls.ts";
import type { Context } from "./context.ts";
import { CliError } from "./errors.ts";
import { ago } from "./output.ts";
import { atOnce, handlesOf, mainOf, recentActivity } from "./sessions.ts";
import { oneLine } from "./terminal.ts";

/** At most this many sessions are offered (the most recently active). */
export const PICK_LIMIT = 500;

export interface PickRow {
  readonly id: string;
  readonly handle: string;
  readonly title: string;
  readonly branches: number;
  readonly last: number;
  readonly status: string;
  readonly workspace: string | undefined;
}

/**
 * The workspace the session's first run recorded (`<settings workspace=…>` of its inputs), if any:
 * read by `readInputs` from the tree at that event — a few events from genesis, so a small fold.
 */
async function workspaceOf(store: Port, head: EventId): Promise<string | undefined> {
  const { loadTree, materialize } = await import("@strata/engine");
  const first = await store.firstLabeled(head, LABEL.inputsRecord);
  if (first === undefined) return undefined;
  let tree = await materialize(store, first.id);
  if (isAsyncStore(store)) tree = await loadTree(tree);
  return readInputs(tree).settings.workspace;
}

/** The rows the picker offers, most recently active first. */
export async function pickRows(store: Port, limit = PICK_LIMIT): Promise<PickRow[]> {
  const listed = await recentActivity(store, limit);
  const handles = handlesOf((await store.listSessions()).map((s: SessionInfo) => s.id));
  return atOnce(listed, async ({ session: s, activity }) => {
    const main = mainOf(activity);
    const imported = (s.metadata as { import?: { from?: unknown } }).import;
    let status = "empty";
    let workspace: string | undefined;
    if (activity.damage.length > 0) status = "damaged (strata verify)";
    else if (main !== undefined) {
      if (imported !== undefined) status = `imported from ${String(imported.from)}`;
      else status = statusText(...withOutcome(await statusOf(store, main.head)));
      workspace = await workspaceOf(store, main.head).catch(() => undefined);
    }
    return {
      id: s.id,
      handle: handles.get(s.id) ?? s.id,
      title: s.title ?? "",
      branches: activity.branches.filter((b) => b.origin !== "rewind").length,
      last: activity.last?.ts ?? s.created,
      status,
      workspace,
    };
  });
}

/** True when `row` matches every word of `term` (case-insensitive) in one of its fields. */
export function rowMatches(row: PickRow, term: string): boolean {
  const hay = [row.handle, row.id, row.title, row.status, row.workspace ?? ""].join("\n").toLowerCase();
  return term
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => hay.includes(w));
}

/**
 * Asks on the terminal which session to take; its id, or undefined when the user backed out
 * (Esc or Ctrl-C). `verb` says what happens to it.
 */
export async function pickSession(ctx: Context, verb: string): Promise<string | undefined> {
  // opened writable: the command that asked goes on to drive the session picked (the store is opened once)
  const store = await ctx.writer();
  const rows = await pickRows(store);
  if (rows.length === 0) throw new CliError(`there are no sessions in ${ctx.dbPath} yet; \`strata chat\` or \`strata run\` starts one`);
  const now = ctx.now();
  const { default: search } = await import("@inquirer/search");
  const home = homedir();
  /** A directory as the row shows it: the home directory as ~, the end of a long path kept. */
  const dirText = (d: string | undefined): string => {
    if (d === undefined) return "";
    const p = home !== "" && (d === home || d.startsWith(`${home}/`)) ? `~${d.slice(home.length)}` : d;
    const t = oneLine(p, 1000);
    return t.length <= 32 ? t : `…${t.slice(-31)}`;
  };
  const shown = (r: PickRow): string =>
    `${r.handle}  ${oneLine(r.title === "" ? "(untitled)" : r.title, 40).padEnd(40)}  ${String(r.branches).padStart(2)} br  ${ago(r.last, now).padEnd(12)}  ${oneLine(r.status, 24).padEnd(24)}  ${dirText(r.workspace)}`;
  // Esc leaves, as Ctrl-C does: the prompt library itself has no key for it.
  const leave = new AbortController();
  const onKey = (_s: unknown, key: { name?: string } | undefined): void => {
    if (key?.name === "escape") leave.abort();
  };
  emitKeypressEvents(process.stdin);
  process.stdin.on("keypress", onKey);
  try {
    return await search<string>(
      {
        message: `session to ${verb} (type to filter)`,
        pageSize: 12,
        source: (term) =>
          rows
            .filter((r) => rowMatches(r, term ?? ""))
            .map((r) => ({
              name: shown(r),
              value: r.id,
              description: `${r.id}${r.workspace === undefined ? "" : `  ·  workspace ${oneLine(r.workspace, 100)}`}`,
            })),
      },
      { output: process.stderr, signal: leave.signal },
    );
  } catch (e) {
    // Ctrl-C or Esc in the prompt: nothing picked, nothing done
    if ((e as Error).name === "ExitPromptError" || (e as Error).name === "AbortPromptError") return undefined;
    throw e;
  } finally {
    process.stdin.off("keypress", onKey);
  }
}
