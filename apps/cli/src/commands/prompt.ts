/** `strata prompt` (CLI-20): the exact request the model saw, or would see, at any event. */
import { type ModelRequest, renderPrompt } from "@strata/agent";
import { selectOne } from "@strata/dom";
import { loadTree, Session } from "@strata/engine";
import { checkEventText, eventOnBranch, resolveAddress } from "../address.ts";
import { type CommandImpl, str } from "../command.ts";
import { lineDiff } from "../render.ts";

/** The request as readable text. */
export function requestText(req: ModelRequest): string {
  const lines: string[] = ["── system ──", req.system];
  for (const m of req.messages) {
    if (m.role === "tool") lines.push(`── tool ${m.toolCallId} ──`, m.content);
    else if (m.role === "assistant") {
      lines.push("── assistant ──");
      if (m.content !== "") lines.push(m.content);
      for (const c of m.toolCalls ?? []) lines.push(`[call ${c.id}] ${c.name} ${c.arguments}`);
    } else lines.push("── user ──", m.content);
  }
  lines.push("── tools ──", ...req.tools.map((t) => `${t.name}: ${t.description}`));
  lines.push("── settings ──", JSON.stringify(req.settings));
  return `${lines.join("\n")}\n`;
}

export const prompt: CommandImpl = {
  check(args) {
    checkEventText("at", str(args, "at"));
    checkEventText("diff", str(args, "diff"));
  },
  async run(ctx, args) {
    // On either port (decision 0036); on PostgreSQL the tree at the event is loaded whole first.
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const at = str(args, "at") !== undefined ? await eventOnBranch(store, a.branch, str(args, "at") as string) : a.event;
    const other = str(args, "diff");
    const at2 = other === undefined ? undefined : await eventOnBranch(store, a.branch, other);
    const { session } = await Session.open(store, a.session.id, { branch: a.branch.name });
    const req = await renderPrompt(session, { at });
    // An imported session (IM-9): what its source did not record is empty here, and said so.
    const tree = await session.at(at);
    const source = selectOne(ctx.remote ? await loadTree(tree) : tree, "meta > import[unrecorded]");
    const unrecorded = source?.attrs.unrecorded?.split(" ").filter((w) => w !== "") ?? [];
    if (at2 === undefined) {
      if (ctx.out.json)
        ctx.out.data({
          session: a.session.id,
          branch: a.branch.name,
          event: at,
          request: req,
          ...(unrecorded.length > 0 ? { unrecorded } : {}),
        });
      else {
        if (source !== undefined && unrecorded.length > 0)
          ctx.out.note(
            ctx.out.paint(
              "yellow",
              `note: imported from ${source.attrs.from ?? "another tool"}, which did not record ${unrecorded.map((w) => (w === "system" ? "the system prompt" : w === "tools" ? "the tool roster" : w)).join(" or ")}: ${unrecorded.length === 1 ? "it is" : "they are"} empty below`,
            ),
          );
        ctx.out.write(requestText(req));
      }
      return 0;
    }
    const req2 = await renderPrompt(session, { at: at2 });
    const d = lineDiff(requestText(req).split("\n"), requestText(req2).split("\n"));
    const same = d.every((x) => x.op === "=");
    if (ctx.out.json) {
      ctx.out.data({ session: a.session.id, branch: a.branch.name, from: at, to: at2, same, changes: d.filter((x) => x.op !== "=") });
      return 0;
    }
    if (same) ctx.out.info(`the prompts at ${at} and ${at2} are identical`);
    for (const x of d) {
      if (x.op === "=") continue;
      ctx.out.line(x.op === "+" ? ctx.out.paint("green", `+ ${x.line}`) : ctx.out.paint("red", `- ${x.line}`));
    }
    return 0;
  },
};
