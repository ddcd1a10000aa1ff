/**
 * What a run uses (CLI-10, CLI-11, CLI-28, CLI-29): flags first, then what the session recorded,
 * then defaults — checked before anything is created. Paths a session recorded are data from
 * elsewhere once a session can be imported: context files are read only from inside the
 * workspace (symlinks resolved), a recorded template path of an imported session is never
 * followed, and every input not re-read from disk is named in a note (the recorded copy is used).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import {
  blobText,
  checkoutWorkspace,
  checkTemplate,
  DEFAULT_SYSTEM_TEMPLATE,
  fetchBlobs,
  type Model,
  type RecordedInputs,
  readInputs,
  TemplateError,
  ToolRegistry,
  workspaceElement,
  workspaceTools,
} from "@strata/agent";
import { materialize, type Session } from "@strata/engine";
import { createModel } from "@strata/models";
import { type BranchInfo, isAsyncStore } from "@strata/store";
import { type BranchDir, dirOwner, ranksBefore, takeOwnDir } from "./branch-dir.ts";
import { type Args, int, list, str } from "./command.ts";
import type { Context } from "./context.ts";
import { checkDemoWorkspace, DEMO_SPEC, demoWorkspace, freshDemoWorkspace } from "./demo.ts";
import { CliError, UsageError } from "./errors.ts";
import { modelSpecCode } from "./model-spec.ts";
import { type AnySession, settled } from "./port.ts";
import { handleOf } from "./sessions.ts";
import { defaultBranchDir, dirState, lineDir } from "./workspace.ts";

export const BUILT_IN = "(built-in)";

export interface Prepared {
  readonly model: Model;
  readonly modelSpec: string;
  /** The offline demo plays (no model configured). */
  readonly demo: boolean;
  readonly registry: ToolRegistry;
  readonly workspace: string;
  /** How the workspace was chosen, for the banner. */
  readonly workspaceFrom: "flag" | "recorded" | "demo" | "cwd" | "own";
  readonly templates: Record<string, string> | undefined;
  readonly templateFile: string;
  readonly context: Record<string, string>;
  readonly maxSteps: number;
  readonly budget: number | undefined;
  readonly settings: { temperature?: number };
  readonly notes: string[];
}

/** The form of the run flags, checked before any file is opened (CLI-2). */
export function checkRunFlags(args: Args): void {
  if (int(args, "max-steps", 1) < 1)
    throw new UsageError("--max-steps must be at least 1 (a run of 0 model turns would only record a stop)");
  if (str(args, "budget") !== undefined && int(args, "budget", 1) < 1) throw new UsageError("--budget must be at least 1 token");
  temperature(args);
}

function temperature(args: Args): { temperature?: number } {
  const t = str(args, "temperature");
  if (t === undefined) return {};
  const n = Number(t);
  if (t.trim() === "" || !Number.isFinite(n) || n < 0 || n > 2)
    throw new UsageError(`--temperature takes a number from 0 to 2, got ${JSON.stringify(t)}`);
  return { temperature: n };
}

function makeModel(ctx: Context, spec: string, named: boolean): Model {
  // What the CLI can tell from the spec itself, whatever the model package reports: a provider it
  // does not know, and a script file that is not there.
  const colon = spec.indexOf(":");
  const provider = colon < 0 ? spec : spec.slice(0, colon);
  if (provider !== "scripted" && provider !== "openai")
    throw new UsageError(
      `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(spec)}: use scripted:FILE.json or openai:MODEL`,
    );
  if (provider === "scripted" && colon > 0 && spec.length > colon + 1) {
    const file = resolve(ctx.cwd, spec.slice(colon + 1));
    if (!existsSync(file)) {
      const message = `the model script ${file} does not exist (--model scripted:FILE.json)`;
      throw named
        ? new UsageError(message)
        : new CliError(`${message}; it was recorded as the session's model — give another with --model`);
    }
  }
  try {
    return createModel(spec, { env: ctx.env as NodeJS.ProcessEnv, cwd: ctx.cwd });
  } catch (e) {
    if (modelSpecCode(e) !== undefined) throw e;
    throw new CliError(`cannot use the model ${JSON.stringify(spec)}: ${(e as Error).message}`);
  }
}

/**
 * Reads an input file. One named on the command line that is missing or unreadable makes the
 * command line wrong (exit 2, CLI-2); one the session recorded is a failure (exit 1).
 */
function readText(path: string, what: string, named: boolean): string {
  const fail = (message: string): Error => (named ? new UsageError(message) : new CliError(message));
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw fail(`${what} ${path} does not exist`);
    if (code === "EISDIR") throw fail(`${what} ${path} is a directory, not a file`);
    throw fail(`cannot read ${what} ${path}: ${code ?? (e as Error).message}`);
  }
}

/** `abs` as a real path inside the real workspace, or undefined when it resolves outside it. */
function inside(workspace: string, abs: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    return undefined;
  }
  const rel = relative(realpathSync(workspace), real);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? undefined : real;
}

/** What the inputs are chosen from beyond the tree: read from the store once, on either port. */
interface Recorded {
  readonly session: AnySession;
  readonly inputs: RecordedInputs;
  /** `metadata.importedFrom` of an imported session. */
  readonly importedFrom: unknown;
  /** The recorded copy of a context file (by blob). */
  readonly copy: (hash: string) => string;
}

async function recordedOf(session: AnySession): Promise<Recorded> {
  const inputs = readInputs(session.durableTree);
  const store = session.store;
  const importedFrom = (await store.getSession(session.id))?.metadata.importedFrom;
  if (!isAsyncStore(store)) return { session, inputs, importedFrom, copy: (hash) => blobText(store, hash) };
  const blobs = await fetchBlobs(store, inputs.context.values());
  return { session, inputs, importedFrom, copy: (hash) => blobs.text(hash) };
}

/**
 * The other branches of the session that `keep` picks and whose head is their own, with the
 * directory each head records (only those are rebuilt).
 */
async function branchDirs(
  session: AnySession,
  keep: (b: BranchInfo, me: BranchInfo | undefined) => boolean,
): Promise<{ me: BranchInfo | undefined; others: BranchDir[] }> {
  const all = await session.store.branches(session.id);
  const me = all.find((b) => b.name === session.branch);
  const others: BranchDir[] = [];
  for (const b of all) {
    if (b.name === session.branch || !keep(b, me)) continue;
    if ((await session.store.eventMeta(b.head))?.session !== session.id) continue;
    const tree = await materialize(session.store, b.head);
    others.push({ branch: b, dir: await settled(() => lineDir(tree)) });
  }
  return { me, others };
}

/**
 * Everything a run or resume uses, in the order it is checked: model, limits, template,
 * workspace (the demo's is made fresh here, after every check before it passed; a branch whose
 * directory is missing or empty gets the files its head records checked out there), context files.
 */
export async function prepare(ctx: Context, args: Args, session: AnySession | undefined): Promise<Prepared> {
  const facts = session === undefined ? undefined : await recordedOf(session);
  const recorded = facts?.inputs;
  const rs = recorded?.settings ?? {};
  const notes: string[] = [];
  const flagModel = str(args, "model");
  if (session !== undefined && flagModel === undefined && rs["model-spec"] === undefined)
    throw new UsageError(
      `session ${session.id} recorded no model (it was stopped while being created); give one with --model SPEC, or start over with strata run`,
    );
  const fromEnv = (ctx.env.STRATA_MODEL ?? "") === "" ? undefined : ctx.env.STRATA_MODEL;
  const modelSpec = flagModel ?? rs["model-spec"] ?? fromEnv ?? DEMO_SPEC;
  const demo = session === undefined && modelSpec === DEMO_SPEC && flagModel === undefined;
  const model = makeModel(ctx, modelSpec, flagModel !== undefined || rs["model-spec"] === undefined);
  const maxSteps = int(args, "max-steps", Number(rs["max-steps"] ?? 30));
  const budget =
    str(args, "budget") !== undefined
      ? int(args, "budget", 0)
      : rs["budget-tokens"] !== undefined
        ? Number(rs["budget-tokens"])
        : undefined;
  const { templates, templateFile } = template(ctx, args, facts, notes);
  const { workspace, workspaceFrom, restore, owned } = await chooseWorkspace(ctx, args, facts, demo);
  if (owned !== undefined && session !== undefined) {
    if (isAsyncStore(session.store))
      throw new UsageError(
        `the working directory ${owned.dir} belongs to branch ${owned.by}; over PostgreSQL ${session.branch} cannot get a directory of its own yet — pass --workspace DIR (a new or empty directory gets its files)`,
      );
    const r = await takeOwnDir(session as Session, ctx.dbPath, workspace, owned.dir);
    notes.push(
      `${owned.dir} is the working directory of branch ${owned.by}: ${session.branch} gets its own, ${workspace} (event ${r.event.id}, ${r.fileCount} files)`,
    );
  } else if (restore && session !== undefined) {
    const r = await checkoutWorkspace(session.durableTree, workspace, session.store);
    notes.push(
      `the workspace ${workspace} was ${restore}: checked out the ${r.written + r.unchanged} files event ${session.head.id} records there`,
    );
  }
  const context = contextFiles(args, facts, workspace, notes);
  return {
    model,
    modelSpec,
    demo,
    registry: new ToolRegistry(workspaceTools({ root: workspace })),
    workspace,
    workspaceFrom,
    templates,
    templateFile,
    context,
    maxSteps,
    budget,
    settings: temperature(args),
    notes,
  };
}

/**
 * The template: a flag (read and parsed now), else the recorded file re-read from disk (a change
 * is recorded as a patch) — unless the session was imported, whose paths name someone else's
 * machine — else the recorded copy, else the built-in default.
 */
function template(
  ctx: Context,
  args: Args,
  facts: Recorded | undefined,
  notes: string[],
): { templates: Record<string, string> | undefined; templateFile: string } {
  const recorded = facts?.inputs;
  const flagged = str(args, "template");
  const recordedFile = recorded?.settings["template-file"];
  if (flagged !== undefined) {
    const file = resolve(ctx.cwd, flagged);
    const source = readText(file, "the template", true);
    try {
      checkTemplate(source, file);
    } catch (e) {
      if (e instanceof TemplateError) throw new CliError(`the template ${file} does not parse: ${e.message}`);
      throw e;
    }
    return { templates: { system: source }, templateFile: file };
  }
  const file = recordedFile ?? BUILT_IN;
  if (file === BUILT_IN)
    return { templates: recorded?.templates.has("system") ? undefined : { system: DEFAULT_SYSTEM_TEMPLATE }, templateFile: BUILT_IN };
  if (facts?.importedFrom !== undefined) {
    notes.push(
      `the template path ${file} was recorded on the machine this session was imported from: not read; using the copy recorded in the session (--template FILE uses another)`,
    );
    return { templates: undefined, templateFile: file };
  }
  if (!existsSync(file)) {
    notes.push(`the template ${file} is gone from disk; using the copy recorded in the session`);
    return { templates: undefined, templateFile: file };
  }
  return { templates: { system: readText(file, "the template", false) }, templateFile: file };
}

/**
 * The workspace: a flag, else the directory the branch records (`<workspace dir>`, else the
 * recorded setting), else the current directory (or the demo's). `restore` says that the branch
 * records files and the directory is missing or empty: its head is checked out there first.
 */
async function chooseWorkspace(
  ctx: Context,
  args: Args,
  facts: Recorded | undefined,
  demo: boolean,
): Promise<{
  workspace: string;
  workspaceFrom: Prepared["workspaceFrom"];
  restore: "missing" | "empty" | undefined;
  /** The recorded directory belongs to another branch: this one gets `workspace`, a new one. */
  owned?: { dir: string; by: string };
}> {
  const session = facts?.session;
  const flagged = str(args, "workspace");
  const recorded = session === undefined ? undefined : lineDir(session.durableTree);
  // An imported session's recorded workspace and commands come from someone else's machine:
  // resuming it runs its pending tools, so the workspace must be named explicitly.
  if (session !== undefined && flagged === undefined && facts?.importedFrom !== undefined)
    throw new UsageError(
      `session ${session.id} was imported (from ${String(facts.importedFrom)}); its tools would run in the workspace it recorded (${recorded ?? "?"}) — pass --workspace DIR to choose where`,
    );
  if (session !== undefined && flagged === undefined && recorded === undefined)
    throw new UsageError(`session ${session.id} recorded no workspace (it was stopped while being created); pass --workspace DIR`);
  let workspace: string;
  let from: Prepared["workspaceFrom"];
  if (demo) {
    workspace = flagged === undefined ? demoWorkspace(ctx.cwd) : resolve(ctx.cwd, flagged);
    if (flagged !== undefined) checkDemoWorkspace(workspace);
    freshDemoWorkspace(workspace, flagged === undefined);
    from = flagged === undefined ? "demo" : "flag";
  } else {
    workspace = resolve(ctx.cwd, flagged ?? recorded ?? ".");
    from = flagged !== undefined ? "flag" : session !== undefined ? "recorded" : "cwd";
  }
  // Two branches never work in one directory (CLI-31): another branch's is refused, and a branch
  // whose recorded directory another owns (a head a rewind kept, say) gets its own.
  if (session !== undefined && !demo) {
    if (flagged !== undefined && workspace !== recorded) {
      const other = usedBy((await branchDirs(session, (b) => b.origin !== "rewind")).others, workspace);
      if (other !== undefined)
        throw new UsageError(
          `--workspace ${workspace} is the working directory of branch ${other}; give another (a new or empty directory gets the files of ${session.branch})`,
        );
    } else if (flagged === undefined) {
      const { me, others } = await branchDirs(session, (b, m) => m !== undefined && ranksBefore(b, m));
      const owner = me === undefined ? undefined : dirOwner(me, others, workspace);
      if (owner !== undefined) {
        const own = defaultBranchDir(ctx.home, await handleOf(session.store, session.id), session.branch);
        return { workspace: own, workspaceFrom: "own", restore: undefined, owned: { dir: workspace, by: owner } };
      }
    }
  }
  const state = dirState(workspace);
  if (session !== undefined && workspaceElement(session.durableTree) !== undefined && (state === "missing" || state === "empty"))
    return { workspace, workspaceFrom: from, restore: state };
  if (state === "missing" || state === "not-dir") {
    const message = `the workspace ${workspace} is not a directory; create it or pass --workspace DIR`;
    throw flagged !== undefined ? new UsageError(message) : new CliError(message);
  }
  return { workspace, workspaceFrom: from, restore: undefined };
}

/** A branch other than the session's, not a head a rewind kept, whose head records `dir`. */
function usedBy(others: readonly BranchDir[], dir: string): string | undefined {
  return others.find((o) => o.branch.origin !== "rewind" && o.dir === dir)?.branch.name;
}

/**
 * Context files: flags, else the recorded paths, else AGENTS.md when the workspace has one. Only
 * files inside the workspace are read; a recorded path that leads outside it (absolute, `..`, or a
 * symlink) is not followed and its recorded copy is used.
 */
function contextFiles(args: Args, facts: Recorded | undefined, workspace: string, notes: string[]): Record<string, string> {
  const recorded = facts?.inputs;
  const context: Record<string, string> = {};
  const flags = list(args, "context");
  for (const p of flags) {
    const abs = resolve(workspace, p);
    if (!existsSync(abs)) throw new UsageError(`the context file ${abs} does not exist`);
    const real = inside(workspace, abs);
    if (real === undefined)
      throw new UsageError(
        `the context file ${p} is outside the workspace ${workspace}; context files must be inside it (copy the file in)`,
      );
    context[relative(workspace, abs)] = readText(real, "the context file", true);
  }
  if (flags.length > 0) return context;
  const paths = [...(recorded?.context.keys() ?? [])];
  if (paths.length === 0) {
    const agents = join(workspace, "AGENTS.md");
    const real = existsSync(agents) ? inside(workspace, agents) : undefined;
    if (real !== undefined) context["AGENTS.md"] = readText(real, "the context file", false);
    return context;
  }
  for (const p of paths) {
    const hash = recorded?.context.get(p) as string;
    const copy = (): string => (facts as Recorded).copy(hash);
    const abs = resolve(workspace, p);
    const lexical = relative(workspace, abs);
    const escapes = isAbsolute(p) || lexical === "" || lexical.startsWith("..") || isAbsolute(lexical);
    const real = escapes || !existsSync(abs) ? undefined : inside(workspace, abs);
    if (real !== undefined) context[p] = readText(real, "the context file", false);
    else {
      notes.push(
        escapes || existsSync(abs)
          ? `the context file ${JSON.stringify(p)} recorded in the session leads outside the workspace ${workspace}: not read; using the copy recorded in the session`
          : `the context file ${p} is gone from the workspace; using the copy recorded in the session`,
      );
      context[p] = copy();
    }
  }
  return context;
}
