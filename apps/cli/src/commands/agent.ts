/**
 * Commands that drive the agent: `run` and `resume` (CLI-10, CLI-11, CLI-12). Every input of a
 * run is recorded in the session before it is used (L4); `resume` re-reads the recorded files
 * (within the limits of CLI-29) and records any change as a visible patch, then reconciles what a
 * crash left open. The one-driver lease is taken before anything is printed, and released on every
 * way out — a closed stdout (`strata run | head`) included, which only drops the output. Both run
 * on SQLite and on PostgreSQL (`--db postgres://…`, decision 0038): there the lease is the fleet's,
 * so a session started on one machine is resumed on another once its driver is gone.
 */

import { isAbsolute, relative } from "node:path";
import {
  ATTR,
  CALL,
  type Model,
  ModelError,
  type RunAgentOptions,
  type RunResult,
  runAgent,
  runState,
  startRun,
  TAG,
  TURN,
} from "@strata/agent";
import { bodyOf, type LifecycleWork, type Port, Session } from "@strata/engine";
import { type AsyncStore, isAsyncStore, openStore, type SessionId, type Store } from "@strata/store";
import { LAST, parseAddress, resolveAddress } from "../address.ts";
import { type Args, type CommandImpl, exclusive, flag, str } from "../command.ts";
import type { Context } from "../context.ts";
import { DEMO_TASK } from "../demo.ts";
import { CliError, EXIT, UsageError } from "../errors.ts";
import { acquireLease, type Lease } from "../lease.ts";
import { count, type Out } from "../output.ts";
import type { AnySession } from "../port.ts";
import { reporter } from "../reporter.ts";
import { checkRunFlags, type Prepared, prepare } from "../run-inputs.ts";
import { handleOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";
import { trackerFor } from "../workspace.ts";

const GOOD = new Set(["completed-by-tool", "env-completed", "end-turn"]);

/** A session title from a task: one line, at most 80 characters. */
export function titleOf(task: string): string {
  const flat = task.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

/**
 * Renders the first request of a new session on a scratch in-memory store, with the very inputs
 * the run will record, and refuses a template that fails there — before the real session exists
 * (CLI-28). No model is asked anything.
 */
export async function preflight(p: Prepared, task: string): Promise<void> {
  const scratch = openStore(":memory:");
  try {
    const probe: Model = {
      id: p.model.id,
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new ModelError("cancelled", "a preflight sends no request")) }),
      }),
    };
    const r = await runAgent(Session.create(scratch), {
      model: probe,
      registry: p.registry,
      task,
      ...(p.templates !== undefined ? { templates: p.templates } : {}),
      context: p.context,
      settings: p.settings,
      sessionSettings: { workspace: p.workspace, "model-spec": p.modelSpec, "template-file": p.templateFile },
      limits: { maxSteps: 1 },
    });
    if (r.stop === "prompt-error")
      throw new CliError(`the template ${p.templateFile} fails on the first request: ${r.detail ?? "?"}; nothing was created`);
  } finally {
    scratch.close();
  }
}

/** The loop's options from the prepared inputs (the same for the first phase and the loop itself). */
export function loopOptions(p: Prepared): RunAgentOptions {
  return {
    model: p.model,
    registry: p.registry,
    ...(p.templates !== undefined ? { templates: p.templates } : {}),
    context: p.context,
    settings: p.settings,
    sessionSettings: { workspace: p.workspace, "model-spec": p.modelSpec, "template-file": p.templateFile },
    limits: { maxSteps: p.maxSteps, ...(p.budget !== undefined ? { budgetTokens: p.budget } : {}) },
  };
}

/**
 * Runs the agent loop on `session` (with a new `task`, or continuing what it holds) until it
 * stops, showing what happens as it happens; `signal` cancels it. The loop of `run`, `resume` and
 * each message of `chat`.
 */
export async function runTurn(
  ctx: Context,
  session: AnySession,
  p: Prepared,
  task: string | undefined,
  signal: AbortSignal,
  echoUser = true,
): Promise<RunResult> {
  const show = reporter(ctx.out, session, ctx.out.live, { echoUser });
  // The tools' directory, tracked: the loop records its baseline and every file a call changes (CLI-34).
  const tracker = trackerFor(ctx.dbPath, p.workspace, session.store);
  try {
    return await runAgent(session, {
      ...loopOptions(p),
      workspace: tracker,
      ...(task !== undefined ? { task } : {}),
      signal,
      onEvent: show.onEvent,
    });
  } finally {
    show.close();
  }
}

async function drive(
  ctx: Context,
  session: AnySession,
  p: Prepared,
  task: string | undefined,
  lease: Lease,
  resumed: boolean,
): Promise<number> {
  const out = ctx.out;
  for (const n of p.notes) out.note(out.paint("yellow", `note: ${n}`));
  const ctl = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts++;
    if (interrupts > 1) {
      // Over PostgreSQL the release may not land before the exit: the lease then goes stale.
      void lease.release();
      process.exit(EXIT.cancelled);
    }
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
    result = await runTurn(ctx, session, p, task, ctl.signal);
  } finally {
    process.off("SIGINT", onSigint);
    ctx.signal.removeEventListener("abort", stopOnParent);
  }
  const code = GOOD.has(result.stop) ? EXIT.ok : result.stop === "cancelled" ? EXIT.cancelled : EXIT.failure;
  const handle = await handleOf(session.store, session.id);
  const at = `${session.branch === "main" ? handle : `${handle}@${session.branch}`}`;
  if (out.json) {
    out.data({
      session: session.id,
      handle,
      branch: session.branch,
      head: session.head.id,
      resumed,
      ...result,
      detail: result.detail ?? null,
    });
    return code;
  }
  if (out.quiet) {
    out.line(`${handle}@${session.branch} ${result.stop}`);
    return code;
  }
  const colour = code === 0 ? "green" : "red";
  out.line(
    `${out.paint(colour, "■")} ${out.paint("bold", result.stop)}${result.detail ? ` — ${oneLine(result.detail, 120)}` : ""}  ${out.paint("dim", `(${count(result.steps, "step")}, ${count(result.calls, "call")}, ${result.effective} executed, ${count(result.tokens, "token")})`)}`,
  );
  if (code !== 0) out.note(`resume with: strata resume ${at}`);
  return code;
}

/** The banner: which session, branch and model, and where the tools act. */
export async function banner(out: Out, cwd: string, session: AnySession, p: Prepared, verb: string): Promise<void> {
  const handle = await handleOf(session.store, session.id);
  out.info(
    `${out.paint("bold", verb)} ${out.paint("cyan", handle)} ${out.paint("dim", `(${session.id})`)}  ${out.paint("dim", `branch ${session.branch} · model ${p.model.id}`)}`,
  );
  const why =
    p.workspaceFrom === "demo"
      ? "the offline demo's own copy of fixtures/demo-workspace (no model is configured)"
      : p.workspaceFrom === "cwd"
        ? "the current directory: the agent's tools read, write and run commands here"
        : p.workspaceFrom === "recorded"
          ? "the branch's own, as recorded"
          : p.workspaceFrom === "own"
            ? "the branch's own, new: the one it recorded belongs to another branch"
            : p.demo
              ? "a copy of fixtures/demo-workspace for the offline demo"
              : "as given";
  const rel = relative(cwd, p.workspace);
  const shown = rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? p.workspace : rel;
  out.info(`${out.paint("bold", "workspace")} ${shown}  ${out.paint("dim", `— ${why}`)}`);
}

export const run: CommandImpl = {
  check(args) {
    checkRunFlags(args);
    exclusive(args, "session", "last");
    const target = str(args, "session");
    if (target !== undefined) parseAddress(target);
    const given = args.positionals[0];
    if (given !== undefined && given.trim() === "") throw new UsageError("the TASK is empty; say what the agent should do");
    if (target === undefined && !flag(args, "last")) return;
    if (str(args, "title") !== undefined) throw new UsageError("--title names a new session; a continued session keeps its title");
    if (given === undefined)
      throw new UsageError(
        `strata run ${target === undefined ? "--last" : "--session"} needs a TASK (e.g. strata run "now add docs" --last); to continue where it stopped, strata resume`,
      );
  },
  async run(ctx, args) {
    const target = flag(args, "last") ? LAST : str(args, "session");
    const given = args.positionals[0];
    if (target === undefined) return start(ctx, args, given);
    const store = await ctx.writer();
    const a = await resolveAddress(store, target, ctx.branch);
    if (a.explicitEvent)
      throw new UsageError(
        `--session takes SESSION or SESSION@BRANCH; to continue from event ${a.event}, fork there first (strata fork ${a.session.id}@${a.event})`,
      );
    const lease = await acquireLease(store, a.session.id, a.branch.name, "run --session");
    try {
      const session = await openDriven(store, a.session.id, a.branch.name, lease);
      const p = await prepare(ctx, args, session);
      await banner(ctx.out, ctx.cwd, session, p, "session");
      return await drive(ctx, session, p, given as string, lease, false);
    } finally {
      await lease.release();
    }
  },
};

/** A new session: everything checked (and the first prompt rendered) before it is created. */
async function start(ctx: Context, args: Args, given: string | undefined): Promise<number> {
  const configured = str(args, "model") !== undefined || (ctx.env.STRATA_MODEL ?? "") !== "";
  if (!configured && given !== undefined)
    throw new UsageError(
      "no model is configured: give one with --model openai:MODEL (OPENAI_API_KEY) or --model scripted:FILE, or set STRATA_MODEL; `strata run` alone plays the offline demo, which takes no TASK",
    );
  if (configured && given === undefined) throw new UsageError('strata run needs a TASK (e.g. strata run "fix the failing test")');
  const p = await prepare(ctx, args, undefined);
  const task = given ?? DEMO_TASK;
  await preflight(p, task);
  const store = await ctx.writer({ create: true });
  const [id, held] = await createStarted(store, p, task, str(args, "title") ?? titleOf(task), "run");
  try {
    // Reopened fenced by the lease, so every append proves this process still drives the branch.
    const session = await openDriven(store, id, "main", held);
    await banner(ctx.out, ctx.cwd, session, p, "session");
    return await drive(ctx, session, p, undefined, held, false);
  } finally {
    await held.release();
  }
}

/**
 * A new session with its inputs and `task` recorded, and its main branch's lease held by `by`;
 * everything was checked before (the template rendered by {@link preflight}).
 */
export async function createStarted(
  store: Store | AsyncStore,
  p: Prepared,
  task: string,
  title: string,
  by: string,
): Promise<[SessionId, Lease]> {
  let held: Lease;
  let id: SessionId;
  if (!isAsyncStore(store)) {
    // Creation, inputs, task and the lease are one transaction (EN-34): a crash leaves no session, or
    // one with its task that nobody drives.
    let lease: Lease | undefined;
    const created = Session.create(store, {
      title,
      init: (s) => {
        startRun(s, { ...loopOptions(p), task });
        lease = acquireLease(store, s.id, s.branch, by);
      },
    });
    [held, id] = [lease as Lease, created.id];
    try {
      created.close();
    } catch (e) {
      await held.release();
      throw e;
    }
  } else {
    // Creation, inputs and task are one transaction; the lease is taken right after (a crash in
    // between leaves a session with its task that nobody drives, which `resume` continues).
    const created = await Session.create(store, { title, init: async (s) => void (await startRun(s, { ...loopOptions(p), task })) });
    await created.close();
    [held, id] = [await acquireLease(store, created.id, "main", by), created.id];
  }
  return [id, held];
}

/**
 * The branch opened fenced by `lease`; over PostgreSQL its tree loaded (the prompt is a projection
 * of all of it, and the banner and the lifecycle work read it).
 */
export async function openDriven(store: Store | AsyncStore, id: SessionId, branch: string, lease: Lease): Promise<AnySession> {
  const { session } = await Session.open(store as Port, id, { branch, lease: lease.token });
  if (isAsyncStore(store)) await session.load();
  return session;
}

function describeWork(out: Out, session: AnySession, work: LifecycleWork): string[] {
  const lines: string[] = [];
  for (const e of work.spawn) {
    const el = e.element;
    if (el.tag !== TAG.call) {
      lines.push(`  <${el.tag}> #${el.id} is open`);
      continue;
    }
    const tool = el.attrs[ATTR.tool] ?? "?";
    if (el.attrs[ATTR.status] === CALL.running)
      lines.push(
        el.attrs[ATTR.replay] === "safe"
          ? out.paint("yellow", `  ${tool} (#${el.id}) was running: safe to repeat, it will re-run`)
          : out.paint("red", `  ${tool} (#${el.id}) was running: not safe to repeat, it will be marked interrupted`),
      );
    else if (el.attrs[ATTR.status] === CALL.arguments)
      lines.push(out.paint("yellow", `  ${tool} (#${el.id}) was still being written by the model: the reply will be asked for again`));
    else lines.push(out.paint("green", `  ${tool} (#${el.id}) was decided but never started: it will run`));
  }
  const last = bodyOf(session.durableTree).lastChild;
  if (last?.tag === TAG.turn && last.attrs[ATTR.status] === TURN.streaming)
    lines.push(out.paint("yellow", "  the model's last reply was cut off: it will be asked again"));
  return lines;
}

export const resume: CommandImpl = {
  check(args) {
    checkRunFlags(args);
    const given = args.positionals[0];
    if (given !== undefined) parseAddress(given);
    else if (process.stdin.isTTY !== true || process.stdout.isTTY !== true)
      throw new UsageError("strata resume takes SESSION[@BRANCH] (or --last); without one it picks on a terminal, and this is not one");
  },
  async run(ctx, args) {
    let given = args.positionals[0];
    if (given === undefined) {
      const { pickSession } = await import("../picker.ts");
      given = await pickSession(ctx, "resume");
      if (given === undefined) return EXIT.ok;
    }
    const store = await ctx.writer();
    const a = await resolveAddress(store, given, ctx.branch);
    if (a.explicitEvent)
      throw new UsageError(
        `resume takes SESSION or SESSION@BRANCH; to continue from event ${a.event}, fork there first (strata fork ${a.session.id}@${a.event})`,
      );
    // Refuse a busy branch before printing anything about it.
    const lease = await acquireLease(store, a.session.id, a.branch.name, "resume");
    try {
      const session = await openDriven(store, a.session.id as SessionId, a.branch.name, lease);
      const work = session.work;
      const state = runState(session);
      const handle = await handleOf(store, session.id);
      if (state.kind === "no-task")
        throw new CliError(
          `session ${session.id}${session.branch === "main" ? "" : `@${session.branch}`} has no task recorded (its creation was interrupted, or the branch was forked before the task); start again with strata run, or give it one: strata run "TASK" --session ${handle}`,
        );
      if (state.kind === "finished") {
        const at = session.branch === "main" ? handle : `${handle}@${session.branch}`;
        // the counters the last run's <stop> recorded
        const stop = session.durableTree.get(3)?.lastChild;
        const n = (k: string): number => Number(stop?.attrs[k] ?? 0);
        if (ctx.out.json)
          ctx.out.data({
            session: session.id,
            handle,
            branch: session.branch,
            head: session.head.id,
            resumed: false,
            stop: state.stop,
            detail: stop?.attrs.detail ?? null,
            steps: n("steps"),
            effective: n("effective"),
            calls: n("calls"),
            tokens: n("tokens"),
          });
        else
          ctx.out.line(
            `nothing to resume: the run on ${session.branch} stopped (${state.stop}). Continue with: strata chat ${at}, or strata run "TASK" --session ${at}`,
          );
        return 0;
      }
      const p = await prepare(ctx, args, session);
      await banner(ctx.out, ctx.cwd, session, p, "resuming");
      ctx.out.info(ctx.out.paint("dim", `  at event ${session.head.id} of ${session.branch}`));
      const lines = describeWork(ctx.out, session, work);
      ctx.out.info(lines.length === 0 ? ctx.out.paint("dim", "  nothing was interrupted") : "lifecycle work:");
      for (const l of lines) ctx.out.info(l);
      return await drive(ctx, session, p, undefined, lease, true);
    } finally {
      await lease.release();
    }
  },
};
