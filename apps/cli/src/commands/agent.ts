/**
 * Commands that drive the agent: `run`, `resume` (CLI-10, CLI-11) and `prompt` (CLI-20). Every
 * input of a run is recorded in the session before it is used (L4); `resume` re-reads the recorded
 * files and records any change as a visible patch, then reconciles what a crash left open.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  type AgentEvent,
  blobText,
  checkTemplate,
  DEFAULT_SYSTEM_TEMPLATE,
  type LifecycleWork,
  type ModelRequest,
  type RunResult,
  readInputs,
  renderPrompt,
  runAgent,
  runCounts,
  Session,
  TemplateError,
  ToolRegistry,
  workspaceTools,
} from "@strata/engine";
import { createModel } from "@strata/models";
import type { SessionId } from "@strata/store";
import { eventOnBranch, resolveAddress } from "../address.ts";
import { type Args, type Command, int, list, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { acquireLease } from "../lease.ts";
import { type Out, printable } from "../output.ts";
import { lineDiff, oneLine } from "../render.ts";

/** The scripted demo model that makes `strata run` work offline on a fresh clone. */
export const DEMO_SCRIPT = resolve(import.meta.dirname, "../../../../fixtures/models/demo.json");
const DEMO_TASK = "Read the meeting notes in this workspace and write SUMMARY.md with the decisions and the open questions.";

const RUN_OPTIONS = {
  model: {
    type: "string",
    value: "SPEC",
    description: "scripted:FILE.json or openai:MODEL (default: $STRATA_MODEL, else the offline demo script)",
  },
  workspace: { type: "string", value: "DIR", description: "the directory the tools may touch (default: the current directory)" },
  template: { type: "string", value: "FILE", description: "the system prompt template (default: strata's built-in one)" },
  context: {
    type: "string",
    value: "FILE",
    multiple: true,
    description: "a context file for the prompt, relative to the workspace (default: AGENTS.md if present)",
  },
  "max-steps": { type: "string", value: "N", description: "model turns before the run stops (default 30)" },
  budget: { type: "string", value: "TOKENS", description: "stop once the run has used this many tokens" },
  temperature: { type: "string", value: "T", description: "sampling temperature, recorded with the model settings" },
} as const;

interface Prepared {
  readonly model: ReturnType<typeof createModel>;
  readonly modelSpec: string;
  readonly registry: ToolRegistry;
  readonly workspace: string;
  readonly templates: Record<string, string> | undefined;
  readonly templateFile: string;
  readonly context: Record<string, string>;
  readonly maxSteps: number;
  readonly budget: number | undefined;
  readonly settings: { temperature?: number };
  readonly notes: string[];
}

/** Flags first, then what the session recorded, then defaults. */
function prepare(ctx: Context, args: Args, session: Session | undefined): Prepared {
  const recorded = session === undefined ? undefined : readInputs(session.durableTree);
  const rs = recorded?.settings ?? {};
  const notes: string[] = [];
  const modelSpec = str(args, "model") ?? rs["model-spec"] ?? ctx.env.STRATA_MODEL ?? `scripted:${DEMO_SCRIPT}`;
  let model: ReturnType<typeof createModel>;
  try {
    model = createModel(modelSpec, { env: ctx.env as NodeJS.ProcessEnv, cwd: ctx.cwd });
  } catch (e) {
    throw new CliError(`cannot use the model ${JSON.stringify(modelSpec)}: ${(e as Error).message}`);
  }
  const workspace = resolve(ctx.cwd, str(args, "workspace") ?? rs.workspace ?? ".");
  if (!existsSync(workspace) || !statSync(workspace).isDirectory())
    throw new CliError(`the workspace ${workspace} is not a directory; create it or pass --workspace DIR`);
  // The template: a flag, else the recorded file re-read from disk (a change is recorded), else
  // the recorded copy, else the built-in default.
  let templateFile =
    str(args, "template") !== undefined ? resolve(ctx.cwd, str(args, "template") as string) : (rs["template-file"] ?? "(built-in)");
  let templates: Record<string, string> | undefined;
  if (templateFile === "(built-in)") templates = recorded?.templates.has("system") ? undefined : { system: DEFAULT_SYSTEM_TEMPLATE };
  else if (existsSync(templateFile)) templates = { system: readFileSync(templateFile, "utf8") };
  else if (str(args, "template") !== undefined) throw new CliError(`the template ${templateFile} does not exist`);
  else {
    notes.push(`the template ${templateFile} is gone from disk; using the copy recorded in the session`);
    templateFile = rs["template-file"] ?? templateFile;
  }
  if (templates?.system !== undefined && templateFile !== "(built-in)") {
    try {
      checkTemplate(templates.system, templateFile);
    } catch (e) {
      if (e instanceof TemplateError) throw new UsageError(`the template does not parse: ${e.message}`);
      throw e;
    }
  }
  // Context files: flags, else the recorded paths, else AGENTS.md when the workspace has one.
  const paths = list(args, "context");
  const recordedPaths = [...(recorded?.context.keys() ?? [])];
  const wanted =
    paths.length > 0 ? paths : recordedPaths.length > 0 ? recordedPaths : existsSync(join(workspace, "AGENTS.md")) ? ["AGENTS.md"] : [];
  const context: Record<string, string> = {};
  for (const p of wanted) {
    const abs = resolve(workspace, p);
    const key = relative(workspace, abs) || p;
    if (existsSync(abs)) context[key] = readFileSync(abs, "utf8");
    else if (recorded?.context.has(p) && session !== undefined) {
      notes.push(`${p} is gone from disk; using the copy recorded in the session`);
      context[p] = blobText(session.store, recorded.context.get(p) as string);
    } else throw new CliError(`the context file ${abs} does not exist`);
  }
  const settings = temperature(args);
  // An imported session's recorded workspace and commands come from someone else's machine:
  // resuming it runs its pending tools, so the workspace must be named explicitly.
  if (
    session !== undefined &&
    str(args, "workspace") === undefined &&
    session.store.getSession(session.id)?.metadata.importedFrom !== undefined
  )
    throw new UsageError(
      `session ${session.id} was imported (from ${String(session.store.getSession(session.id)?.metadata.importedFrom)}); its tools would run in the workspace it recorded (${rs.workspace ?? "?"}) — pass --workspace DIR to choose where`,
    );
  const maxSteps = int(args, "max-steps", Number(rs["max-steps"] ?? 30));
  const budgetFlag = str(args, "budget");
  const budget =
    budgetFlag !== undefined ? int(args, "budget", 0) : rs["budget-tokens"] !== undefined ? Number(rs["budget-tokens"]) : undefined;
  return {
    model,
    modelSpec,
    registry: new ToolRegistry(workspaceTools({ root: workspace })),
    workspace,
    templates,
    templateFile,
    context,
    maxSteps,
    budget,
    settings,
    notes,
  };
}

function temperature(args: Args): { temperature?: number } {
  const t = str(args, "temperature");
  if (t === undefined) return {};
  const n = Number(t);
  if (!Number.isFinite(n) || n < 0 || n > 2) throw new UsageError(`--temperature takes a number from 0 to 2, got ${JSON.stringify(t)}`);
  return { temperature: n };
}

/** Prints the loop's progress as it happens (human mode only). */
function reporter(out: Out, session: Session): (e: AgentEvent) => void {
  let midLine = false;
  const end = (): void => {
    if (midLine) out.write("\n");
    midLine = false;
  };
  return (e) => {
    if (out.json) return;
    switch (e.type) {
      case "turn":
        end();
        if (e.role === "user")
          out.line(`${out.paint("bold", "user")}  ${oneLine(session.durableTree.get(e.element)?.textContent() ?? "", 200)}`);
        else {
          out.write(`${out.paint("bold", "assistant")}  `);
          midLine = true;
        }
        break;
      case "text":
        out.write(printable(e.delta));
        midLine = !e.delta.endsWith("\n");
        break;
      case "call": {
        if (e.status === "arguments" || e.status === "pending") break;
        end();
        const call = session.durableTree.get(e.element);
        if (e.status === "running") {
          const args = call?.children.find((c) => c.tag === "args")?.text ?? "";
          out.line(`  ${out.paint("cyan", "→")} ${out.paint("bold", e.tool)} ${out.paint("dim", oneLine(args, 90))}`);
        } else {
          const mark =
            e.status === "executed" ? (call?.attrs.error ? out.paint("yellow", "!") : out.paint("green", "✓")) : out.paint("red", "✗");
          out.line(`  ${mark} ${e.tool} ${out.paint("dim", e.status)}  ${oneLine(e.detail ?? "", 90)}`);
        }
        break;
      }
      case "reconcile":
        end();
        if (e.action === "dropped-turn") out.line(out.paint("yellow", "  ↺ the model's last reply was cut off; asking again"));
        else if (e.action === "rerun")
          out.line(out.paint("yellow", `  ↺ ${e.tool} was running when the process stopped; it is safe to repeat, re-running`));
        else if (e.action === "interrupted")
          out.line(out.paint("yellow", `  ↺ ${e.tool} was running when the process stopped; it is not safe to repeat, marked interrupted`));
        else out.line(out.paint("yellow", `  ↺ ${e.tool} was decided but never started; running it now`));
        break;
      case "stop":
        end();
        break;
    }
  };
}

const GOOD = new Set(["completed-by-tool", "env-completed", "end-turn"]);

async function drive(ctx: Context, session: Session, p: Prepared, task: string | undefined): Promise<number> {
  const out = ctx.out;
  const lease = acquireLease(ctx.dbPath, session.id, session.branch);
  for (const n of p.notes) out.note(out.paint("yellow", `note: ${n}`));
  const ctl = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    out.note(
      out.paint("yellow", "\ncancelling: the current call is marked and the session stays resumable (Ctrl-C again to quit at once)"),
    );
    ctl.abort();
  };
  process.on("SIGINT", onSigint);
  const stopOnParent = (): void => ctl.abort();
  ctx.signal.addEventListener("abort", stopOnParent, { once: true });
  let result: RunResult;
  try {
    result = await runAgent(session, {
      model: p.model,
      registry: p.registry,
      ...(task !== undefined ? { task } : {}),
      ...(p.templates !== undefined ? { templates: p.templates } : {}),
      context: p.context,
      settings: p.settings,
      sessionSettings: { workspace: p.workspace, "model-spec": p.modelSpec, "template-file": p.templateFile },
      limits: { maxSteps: p.maxSteps, ...(p.budget !== undefined ? { budgetTokens: p.budget } : {}) },
      signal: ctl.signal,
      onEvent: reporter(out, session),
    });
  } finally {
    lease.release();
    process.off("SIGINT", onSigint);
    ctx.signal.removeEventListener("abort", stopOnParent);
  }
  const code = GOOD.has(result.stop) ? 0 : result.stop === "cancelled" ? 130 : 1;
  if (out.json) {
    out.data({ session: session.id, branch: session.branch, head: session.head.id, ...result });
    return code;
  }
  const colour = code === 0 ? "green" : "red";
  out.line(
    `${out.paint(colour, "■")} ${out.paint("bold", result.stop)}${result.detail ? ` — ${oneLine(result.detail, 120)}` : ""}  ${out.paint("dim", `(${result.steps} steps, ${result.calls} calls, ${result.effective} executed, ${result.tokens} tokens)`)}`,
  );
  if (code !== 0) out.note(`resume with: strata resume ${session.id}${session.branch === "main" ? "" : `@${session.branch}`}`);
  return code;
}

export const run: Command = {
  name: "run",
  summary: "start a session (or continue one with a new task) and drive the agent",
  usage: "strata run [TASK] [--session SESSION[@BRANCH]] [--model SPEC] [--workspace DIR] [--template FILE] [--max-steps N]",
  description:
    "Prints the session id first, then streams what happens: the assistant's text, each tool call and its outcome, and why the run stopped. With no model configured it plays the offline demo script (fixtures/models/demo.json). Ctrl-C cancels cleanly; the session stays resumable.",
  examples: [
    'strata run "fix the failing test" --model openai:gpt-4o-mini --workspace .',
    "strata run --workspace demo            # the offline demo",
    'strata run "now add docs" --session 01JD4',
  ],
  options: {
    ...RUN_OPTIONS,
    session: { type: "string", value: "SESSION", description: "continue this session (SESSION or SESSION@BRANCH) instead of starting one" },
    title: { type: "string", value: "TITLE", description: "the new session's title (default: the task)" },
  },
  positionals: { min: 0, max: 1 },
  json: true,
  async run(ctx, args) {
    const target = str(args, "session");
    let existing: Session | undefined;
    // Check the flags (and the task) before a database is created for nothing.
    const fresh = target === undefined ? prepare(ctx, args, undefined) : undefined;
    if (fresh !== undefined && (args.positionals[0] ?? (fresh.modelSpec === `scripted:${DEMO_SCRIPT}` ? DEMO_TASK : "")).trim() === "")
      throw new UsageError('strata run needs a TASK (e.g. strata run "fix the failing test") unless it plays the demo script');
    const store = ctx.store({ create: target === undefined });
    if (target !== undefined) {
      const a = resolveAddress(store, target, ctx.branch);
      if (a.explicitEvent)
        throw new UsageError(
          `--session takes SESSION or SESSION@BRANCH; to continue from event ${a.event}, fork there first (strata fork ${a.session.id}@${a.event})`,
        );
      existing = Session.open(store, a.session.id, { branch: a.branch.name }).session;
    }
    const p = fresh ?? prepare(ctx, args, existing);
    const task = args.positionals[0] ?? (p.modelSpec === `scripted:${DEMO_SCRIPT}` ? DEMO_TASK : undefined);
    if (task === undefined || task.trim() === "")
      throw new UsageError('strata run needs a TASK (e.g. strata run "fix the failing test") unless it plays the demo script');
    const s = existing ?? Session.create(store, { title: str(args, "title") ?? oneLine(task, 80) });
    if (!ctx.out.json) {
      ctx.out.line(
        `${ctx.out.paint("bold", "session")} ${ctx.out.paint("cyan", s.id)}  ${ctx.out.paint("dim", `branch ${s.branch} · model ${p.model.id} · workspace ${relative(ctx.cwd, p.workspace) || "."}`)}`,
      );
    }
    return drive(ctx, s, p, task);
  },
};

function describeWork(out: Out, session: Session, work: LifecycleWork): string[] {
  const lines: string[] = [];
  for (const e of work.spawn) {
    const el = e.element;
    if (el.tag !== "call") {
      lines.push(`  <${el.tag}> #${el.id} is open`);
      continue;
    }
    const tool = el.attrs.tool ?? "?";
    if (el.attrs.status === "running")
      lines.push(
        el.attrs.replay === "safe"
          ? out.paint("yellow", `  ${tool} (#${el.id}) was running: safe to repeat, it will re-run`)
          : out.paint("red", `  ${tool} (#${el.id}) was running: not safe to repeat, it will be marked interrupted`),
      );
    else if (el.attrs.status === "arguments")
      lines.push(out.paint("yellow", `  ${tool} (#${el.id}) was still being written by the model: the reply will be asked for again`));
    else lines.push(out.paint("green", `  ${tool} (#${el.id}) was decided but never started: it will run`));
  }
  const last = session.durableTree.get(3)?.lastChild;
  if (last?.tag === "turn" && last.attrs.status === "streaming")
    lines.push(out.paint("yellow", "  the model's last reply was cut off: it will be asked again"));
  return lines;
}

export const resume: Command = {
  name: "resume",
  summary: "reopen a session, say what was interrupted, and continue it",
  usage: "strata resume SESSION[@BRANCH] [--model SPEC] [--max-steps N]",
  description:
    "Materializes the branch head, prints the lifecycle work (calls that will run, re-run or be marked interrupted), records any change to the template or context files on disk as a patch, and continues the agent loop with the recorded model unless --model says otherwise.",
  examples: ["strata resume 01JD4", "strata resume 01JD4@try-2 --model scripted:fixtures/models/alt.json"],
  options: RUN_OPTIONS,
  positionals: { min: 1, max: 1 },
  json: true,
  async run(ctx, args) {
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    if (a.explicitEvent)
      throw new UsageError(
        `resume takes SESSION or SESSION@BRANCH; to continue from event ${a.event}, fork there first (strata fork ${a.session.id}@${a.event})`,
      );
    const { session, work } = Session.open(store, a.session.id as SessionId, { branch: a.branch.name });
    const counts = runCounts(session);
    if (counts.lastIsStop && GOOD.has(counts.lastStop ?? "") && session.live.size === 0) {
      if (ctx.out.json)
        ctx.out.data({ session: session.id, branch: session.branch, head: session.head.id, stop: counts.lastStop, resumed: false });
      else
        ctx.out.line(
          `nothing to resume: the run on ${session.branch} stopped (${counts.lastStop}). Continue with: strata run "TASK" --session ${session.id}${session.branch === "main" ? "" : `@${session.branch}`}`,
        );
      return 0;
    }
    const p = prepare(ctx, args, session);
    if (!ctx.out.json) {
      ctx.out.line(
        `${ctx.out.paint("bold", "resuming")} ${ctx.out.paint("cyan", session.id)}@${session.branch} at event ${session.head.id}  ${ctx.out.paint("dim", `model ${p.model.id}`)}`,
      );
      const lines = describeWork(ctx.out, session, work);
      ctx.out.line(lines.length === 0 ? ctx.out.paint("dim", "  nothing was interrupted") : "lifecycle work:");
      for (const l of lines) ctx.out.line(l);
    }
    return drive(ctx, session, p, undefined);
  },
};

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

export const prompt: Command = {
  name: "prompt",
  summary: "the exact request the model saw (or would see) at any event",
  usage: "strata prompt SESSION[@BRANCH|@EVENT] [--at EVENT] [--diff EVENT2]",
  description:
    "Re-renders the request (system prompt, history, tools, model settings) as a projection of the tree at that event, from the recorded template and context files — byte-identical to what was sent then. --diff shows how it changed between two events.",
  examples: ["strata prompt 01JD4", "strata prompt 01JD4 --at 42 --json", "strata prompt 01JD4@31 --diff 57"],
  options: {
    at: { type: "string", value: "EVENT", description: "an event on the branch, or ~N (default: the head)" },
    diff: { type: "string", value: "EVENT2", description: "compare with the prompt at this event" },
  },
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const at = str(args, "at") !== undefined ? eventOnBranch(store, a.branch, str(args, "at") as string) : a.event;
    const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
    const req = renderPrompt(session, { at });
    const other = str(args, "diff");
    if (other === undefined) {
      if (ctx.out.json) ctx.out.data({ session: a.session.id, event: at, request: req });
      else ctx.out.write(requestText(req));
      return 0;
    }
    const at2 = eventOnBranch(store, a.branch, other);
    const req2 = renderPrompt(session, { at: at2 });
    const d = lineDiff(requestText(req).split("\n"), requestText(req2).split("\n"));
    if (ctx.out.json) {
      ctx.out.data({
        session: a.session.id,
        from: at,
        to: at2,
        same: d.every((x) => x.op === "="),
        changes: d.filter((x) => x.op !== "="),
      });
      return 0;
    }
    if (d.every((x) => x.op === "=")) ctx.out.line(`the prompts at ${at} and ${at2} are identical`);
    for (const x of d) {
      if (x.op === "=") continue;
      ctx.out.line(x.op === "+" ? ctx.out.paint("green", `+ ${x.line}`) : ctx.out.paint("red", `- ${x.line}`));
    }
    return 0;
  },
};
