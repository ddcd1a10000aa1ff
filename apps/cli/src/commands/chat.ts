/**
 * `strata chat` (CLI-42, decision 0041): a conversation in the terminal. Each message is one run of
 * the agent loop on the branch the chat holds — the same loop, lease and records as `strata run
 * --session` — so a chat killed anywhere resumes exactly, and every message is an event that
 * `log`, `show`, `prompt` and the inspector see. Slash commands are the session engine's commands
 * run in this process on the held session (`/fork`, `/rewind`, `/undo`, `/prompt`, `/diff` …): one
 * implementation each, the CLI's. Line editing and history are Node's readline; on a non-TTY stdin
 * every line is a message, so a chat can be scripted.
 *
 * Ctrl-C during a turn cancels it (the loop records the cancellation, the session stays); a second
 * Ctrl-C in the same turn quits at once. At the prompt Ctrl-C clears the line; on an empty line it
 * says how to leave, and a second one leaves.
 */
import { createInterface, type Interface } from "node:readline";
import { ATTR, LABEL, openWork, ROLE, type RunResult, TAG } from "@strata/agent";
import { decodeEvent } from "@strata/engine";
import type { AsyncStore, EventMeta, Store, StoredEvent } from "@strata/store";
import { LAST, parseAddress, resolveAddress } from "../address.ts";
import { argumentsWrong, SLASH, words } from "../chat-commands.ts";
import { type Args, type CommandImpl, exclusive, flag, str } from "../command.ts";
import { COMMANDS } from "../commands.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, UsageError } from "../errors.ts";
import { acquireLease, type Lease } from "../lease.ts";
import { count } from "../output.ts";
import { parseCommandArgs } from "../parse.ts";
import type { AnySession } from "../port.ts";
import { checkRunFlags, type Prepared, prepare } from "../run-inputs.ts";
import { handleOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";
import { banner, createStarted, openDriven, preflight, runTurn, titleOf } from "./agent.ts";

const GOOD = new Set(["completed-by-tool", "env-completed", "end-turn"]);

/** The run options a chat passes on when it moves to another branch: all but the workspace, which is the branch's own. */
function withoutWorkspace(args: Args): Args {
  const { workspace: _, ...values } = args.values;
  return { values, positionals: args.positionals };
}

/** The newest `turn.user` event on the chain ending at `head` (the last message sent), or undefined. */
async function lastMessage(store: Store | AsyncStore, head: EventMeta): Promise<EventMeta | undefined> {
  const WINDOW = 1000;
  let top: EventMeta | undefined = head;
  while (top !== undefined && top.depth >= 0) {
    const from: number = top.depth - WINDOW;
    const page = from < 0 ? await store.chainMeta(top.id) : await store.chainMeta(top.id, from);
    for (let i = page.length - 1; i >= 0; i--) if (page[i]?.label === LABEL.turnUser) return page[i];
    if (from < 0) return undefined;
    top = await store.atDepth(top.id, from);
  }
  return undefined;
}

interface Held {
  session: AnySession;
  lease: Lease;
  handle: string;
}

export const chat: CommandImpl = {
  check(args) {
    checkRunFlags(args);
    exclusive(args, "continue", "resume");
    const given = args.positionals[0];
    if (given !== undefined && (flag(args, "continue") || flag(args, "resume")))
      throw new UsageError(`give SESSION, --continue or --resume, not two of them (strata chat --help)`);
    if (given !== undefined) {
      const { at, back } = parseAddress(given);
      if ((at !== undefined && /^[0-9]+$/.test(at)) || back > 0)
        throw new UsageError(
          `chat takes SESSION or SESSION@BRANCH; to talk from an earlier event, fork there first (strata fork ${given})`,
        );
    }
    if (str(args, "title") !== undefined && (given !== undefined || flag(args, "continue") || flag(args, "resume")))
      throw new UsageError("--title names a new session; a continued session keeps its title (strata rename changes it)");
  },
  run: chatCommand,
};

async function chatCommand(ctx: Context, args: Args): Promise<number> {
  const out = ctx.out;
  const tty = process.stdin.isTTY === true;
  let target = args.positionals[0] ?? (flag(args, "continue") ? LAST : undefined);
  if (flag(args, "resume")) {
    if (!tty || process.stdout.isTTY !== true)
      throw new UsageError("--resume picks a session on a terminal; without one, give SESSION or --continue");
    const { pickSession } = await import("../picker.ts");
    const picked = await pickSession(ctx, "chat");
    if (picked === undefined) return EXIT.ok;
    target = picked;
  }
  const configured = str(args, "model") !== undefined || (ctx.env.STRATA_MODEL ?? "") !== "";
  if (target === undefined && !configured)
    throw new UsageError(
      "no model is configured: give one with --model openai:MODEL (OPENAI_API_KEY) or --model scripted:FILE, or set STRATA_MODEL; `strata run` alone plays the offline demo",
    );

  let held: Held | undefined;
  let p: Prepared;
  let store: Store | AsyncStore | undefined;
  if (target !== undefined) {
    store = await ctx.writer();
    const a = await resolveAddress(store, target, ctx.branch);
    const lease = await acquireLease(store, a.session.id, a.branch.name, "chat");
    try {
      const session = await openDriven(store, a.session.id, a.branch.name, lease);
      p = await prepare(ctx, args, session);
      held = { session, lease, handle: await handleOf(store, session.id) };
    } catch (e) {
      await lease.release();
      throw e;
    }
    await banner(out, ctx.cwd, held.session, p, "chat");
    const open = openWork(held.session);
    if (open !== undefined) out.info(out.paint("yellow", `  ${open}: your next message settles that first (as strata resume would)`));
  } else {
    p = await prepare(ctx, args, undefined);
    out.info(`${out.paint("bold", "chat")} ${out.paint("dim", `a new session, created with your first message · model ${p.model.id}`)}`);
    out.info(`${out.paint("bold", "workspace")} ${p.workspace}`);
  }
  for (const n of p.notes) out.note(out.paint("yellow", `note: ${n}`));
  if (tty) out.info(out.paint("dim", "type a message; /help lists commands; Ctrl-C cancels a turn; Ctrl-D or /exit leaves"));

  let lastCode: number = EXIT.ok;
  let turn: AbortController | undefined;
  let interrupts = 0;
  let idleInterrupt = false;

  const release = async (): Promise<void> => {
    if (held !== undefined) await held.lease.release();
  };
  /** Exits at once (a second Ctrl-C in a turn): the lease is given up first. */
  const quitNow = (): void => {
    void release().finally(() => process.exit(EXIT.cancelled));
  };

  // The prompt goes to readline, not through `out`: its colours are written here (the handle and
  // a branch name are the store's, of letters, digits and . _ / - only).
  const sgr = (code: string, t: string): string => (out.color ? `\x1b[${code}m${t}\x1b[0m` : t);
  const visibleWidth = (t: string): number => t.replace(/\x1b\[[0-9;]*m/g, "").length;
  const promptText = (): string =>
    held === undefined
      ? `${sgr("2", "new")} › `
      : `${sgr("36", held.handle)}${held.session.branch === "main" ? "" : sgr("2", `@${held.session.branch}`)} › `;

  const rl: Interface = createInterface({
    input: process.stdin,
    output: tty ? process.stdout : undefined,
    terminal: tty,
    historySize: 500,
    prompt: "",
  });
  /**
   * The lines of a message being written over several: a line ending in `\` goes on on the next,
   * and so does every line of a paste (bracketed paste: the terminal marks where it begins and
   * ends), so pasted text is one message, sent when Enter is pressed after it.
   */
  const continued: string[] = [];
  let pasting = false;
  const prompt = (): void => {
    if (!tty) return;
    rl.setPrompt(continued.length > 0 ? `${" ".repeat(Math.max(0, visibleWidth(promptText()) - 2))}${sgr("2", "…")} ` : promptText());
    rl.prompt();
  };
  if (tty) {
    process.stdout.write("\x1b[?2004h");
    process.stdin.on("keypress", (_s: unknown, key: { name?: string } | undefined) => {
      if (key?.name === "paste-start") pasting = true;
      else if (key?.name === "paste-end") {
        pasting = false;
      }
    });
  }

  /** Empties the line being edited (readline's Ctrl-E then Ctrl-U: to its end, then all before the cursor). */
  const clearLine = (): void => {
    rl.write(null, { ctrl: true, name: "e" });
    rl.write(null, { ctrl: true, name: "u" });
  };
  const onInterrupt = (): void => {
    if (turn !== undefined) {
      interrupts++;
      if (interrupts > 1) {
        quitNow();
        return;
      }
      out.note(
        out.paint("yellow", "\ncancelling the turn: it is recorded as cancelled and the session stays (Ctrl-C again to quit at once)"),
      );
      turn.abort();
      return;
    }
    if (continued.length > 0) {
      // a message of several lines being written: Ctrl-C throws all of it away, this line too
      continued.length = 0;
      clearLine();
      idleInterrupt = false;
      out.write("\n");
      prompt();
      return;
    }
    if (rl.line !== "") {
      // a line being typed: Ctrl-C throws it away, wherever the cursor is
      clearLine();
      idleInterrupt = false;
      return;
    }
    if (idleInterrupt) {
      rl.close();
      return;
    }
    idleInterrupt = true;
    out.write("\n");
    out.note(out.paint("dim", "(Ctrl-C again, Ctrl-D or /exit to leave)"));
    prompt();
  };
  rl.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  const stopOnParent = (): void => turn?.abort();
  ctx.signal.addEventListener("abort", stopOnParent, { once: true });

  /** One message: a run of the loop with it as the task. */
  const send = async (text: string, typedAhead: boolean): Promise<void> => {
    const echo = !tty || typedAhead;
    turn = new AbortController();
    interrupts = 0;
    let result: RunResult;
    try {
      if (held === undefined) {
        await preflight(p, text);
        store = await ctx.writer({ create: true });
        const [id, lease] = await createStarted(store, p, text, str(args, "title") ?? titleOf(text), "chat");
        try {
          const session = await openDriven(store, id, "main", lease);
          held = { session, lease, handle: await handleOf(store, id) };
        } catch (e) {
          await lease.release();
          throw e;
        }
        out.info(out.paint("dim", `session ${held.handle} (${id})`));
        result = await runTurn(ctx, held.session, p, undefined, turn.signal, echo);
      } else result = await runTurn(ctx, held.session, p, text, turn.signal, echo);
    } finally {
      turn = undefined;
    }
    lastCode = GOOD.has(result.stop) ? EXIT.ok : result.stop === "cancelled" ? EXIT.cancelled : EXIT.failure;
    if (lastCode === EXIT.ok)
      out.info(
        out.paint(
          "dim",
          `  (${count(result.steps, "step")}, ${count(result.calls, "call")}, ${count(result.tokens, "token")} · event ${held.session.head.id})`,
        ),
      );
    else
      out.line(
        `${out.paint(lastCode === EXIT.cancelled ? "yellow" : "red", "■")} ${out.paint("bold", result.stop)}${result.detail ? ` — ${oneLine(result.detail, 120)}` : ""}  ${out.paint("dim", "(the session stays: your next message goes on from here)")}`,
      );
  };

  /** Runs one of the CLI's commands in this process on the store the chat holds; its failure is reported, not fatal. */
  const invoke = async (name: string, argv: readonly string[]): Promise<number> => {
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) throw new Error(`internal: no command ${name}`);
    try {
      const cmdArgs = parseCommandArgs(command, argv);
      const impl = await command.load();
      impl.check?.(cmdArgs);
      return (await impl.run(ctx, cmdArgs)) ?? EXIT.ok;
    } catch (e) {
      const { failure } = await import("../failure.ts");
      const [code, message] = failure(e, ctx.dbPath, (ctx.env.STRATA_DEBUG ?? "") !== "");
      out.error(`${out.paint("red", "strata:")} ${message}`);
      return code;
    }
  };

  /** Reopens the held session on `branch` (after a command moved it, or to switch), the lease moved with it. */
  const reopen = async (branch: string, again: boolean): Promise<void> => {
    const h = held as Held;
    const s = store as Store | AsyncStore;
    if (branch !== h.session.branch || again) {
      const lease = await acquireLease(s, h.session.id, branch, "chat");
      if (branch !== h.session.branch) await h.lease.release();
      h.lease = lease;
    }
    const moved = branch !== h.session.branch;
    h.session = await openDriven(s, h.session.id, branch, h.lease);
    if (moved) {
      // the branch's own inputs (its workspace above all): what it recorded, the flags but --workspace
      p = await prepare(ctx, withoutWorkspace(args), h.session);
      for (const n of p.notes) out.note(out.paint("yellow", `note: ${n}`));
    }
  };

  /** Runs a command that needs the branch's lease itself (a rewind): the chat gives it up meanwhile. */
  const withoutLease = async (run: () => Promise<number>): Promise<number> => {
    const h = held as Held;
    await h.lease.release();
    let code: number;
    try {
      code = await run();
    } finally {
      await reopen(h.session.branch, true);
    }
    return code;
  };

  const slash = async (line: string): Promise<boolean> => {
    const [cmd = "", ...rest] = words(line.slice(1));
    const name = cmd.toLowerCase();
    const wrong = argumentsWrong(name, rest);
    if (wrong !== undefined) {
      out.error(`${out.paint("red", "strata:")} ${wrong} (/help lists the commands)`);
      return true;
    }
    if (name === "exit" || name === "quit" || name === "q") return false;
    if (name === "help" || name === "?" || name === "") {
      const width = Math.max(...SLASH.map(([u]) => u.length));
      for (const [u, d] of SLASH) out.line(`  ${out.paint("cyan", u.padEnd(width))}  ${d}`);
      out.line(out.paint("dim", "  anything else is a message to the agent; a message that starts with / is sent when it begins with //"));
      return true;
    }
    if (held === undefined) {
      out.error(`${out.paint("red", "strata:")} /${name} needs a session, and this chat has none yet: send a message first`);
      return true;
    }
    const h = held;
    const at = `${h.session.id}@${h.session.branch}`;
    switch (name) {
      case "session": {
        out.line(
          `${out.paint("cyan", h.handle)} ${out.paint("dim", `(${h.session.id})`)}  branch ${h.session.branch} · head ${h.session.head.id} · model ${p.model.id}`,
        );
        out.line(`workspace ${p.workspace}`);
        return true;
      }
      case "branches":
        await invoke("branches", [h.session.id, ...rest]);
        return true;
      case "prompt":
        await invoke("prompt", [at, ...rest]);
        return true;
      case "tree":
        await invoke("show", [at, ...rest]);
        return true;
      case "files":
        await invoke("show", [at, "--files", ...rest]);
        return true;
      case "log":
        await invoke("log", [at, ...(rest.length === 0 ? ["--limit", "20"] : rest)]);
        return true;
      case "diff": {
        if (rest.length > 1) {
          await invoke("diff", rest);
          return true;
        }
        let from = rest[0];
        if (from !== undefined && !/^([0-9]+|head(~[0-9]+)?)$/.test(from)) {
          out.error(
            `${out.paint("red", "strata:")} /diff takes an EVENT of this branch (an id, or head~N; /log lists them), or two addresses (S@E S@E), got ${JSON.stringify(from)}`,
          );
          return true;
        }
        if (from === undefined) {
          const m = await lastMessage(store as Store | AsyncStore, h.session.head);
          if (m === undefined) {
            out.line(out.paint("dim", "no message sent on this branch yet: nothing to compare"));
            return true;
          }
          from = String(m.depth === 0 ? m.id : ((await (store as Store | AsyncStore).atDepth(m.id, m.depth - 1))?.id ?? m.id));
        }
        await invoke("diff", [
          /^[0-9]+$/.test(from) ? `${h.session.id}@${from}` : from.startsWith("head") ? `${at}${from.slice(4)}` : from,
          at,
        ]);
        return true;
      }
      case "fork": {
        const [branchName, ...more] = rest;
        if (more.length > 0) {
          out.error(`${out.paint("red", "strata:")} /fork takes at most one NAME, got ${rest.length}`);
          return true;
        }
        const before = new Set((await (store as Store | AsyncStore).branches(h.session.id)).map((b) => b.name));
        const code = await invoke("fork", [
          `${h.session.id}@${h.session.head.id}`,
          ...(branchName === undefined ? [] : ["--name", branchName]),
        ]);
        if (code !== EXIT.ok) return true;
        const made = (await (store as Store | AsyncStore).branches(h.session.id)).find((b) => !before.has(b.name));
        if (made === undefined) return true;
        await reopen(made.name, false);
        out.line(
          `${out.paint("green", "now on")} ${h.handle}@${out.paint("cyan", made.name)}  ${out.paint("dim", `workspace ${p.workspace}`)}`,
        );
        return true;
      }
      case "switch": {
        const [branch] = rest;
        if (branch === undefined || rest.length > 1) {
          out.error(`${out.paint("red", "strata:")} /switch takes one BRANCH (/branches lists them)`);
          return true;
        }
        const b = await (store as Store | AsyncStore).branch(h.session.id, branch);
        if (b === undefined) {
          const names = (await (store as Store | AsyncStore).branches(h.session.id)).map((x) => x.name);
          out.error(`${out.paint("red", "strata:")} session ${h.handle} has no branch "${branch}"; branches: ${names.join(", ")}`);
          return true;
        }
        try {
          await reopen(branch, false);
        } catch (e) {
          const { failure } = await import("../failure.ts");
          out.error(`${out.paint("red", "strata:")} ${failure(e, ctx.dbPath, false)[1]}`);
          return true;
        }
        out.line(
          `${out.paint("green", "now on")} ${h.handle}@${out.paint("cyan", branch)}  ${out.paint("dim", `head ${h.session.head.id} · workspace ${p.workspace}`)}`,
        );
        return true;
      }
      case "rewind": {
        const [to, ...flags] = rest;
        if (to === undefined) {
          out.error(`${out.paint("red", "strata:")} /rewind takes the EVENT to go back to (an id, or head~N; /log lists them)`);
          return true;
        }
        await withoutLease(() => invoke("rewind", [at, "--to", to, ...flags]));
        return true;
      }
      case "undo": {
        const m = await lastMessage(store as Store | AsyncStore, h.session.head);
        if (m === undefined || m.depth === 0) {
          out.line(out.paint("dim", "no message sent on this branch yet: nothing to undo"));
          return true;
        }
        const before = (await (store as Store | AsyncStore).atDepth(m.id, m.depth - 1)) as EventMeta;
        const sent = await (store as Store | AsyncStore).event(m.id);
        const code = await withoutLease(() => invoke("rewind", [at, "--to", String(before.id), ...rest]));
        if (code === EXIT.ok && tty && sent !== undefined) {
          // the message taken back is put back on the line, to edit and send again
          const text = messageOf(sent);
          if (text !== undefined) pendingLine = text;
        }
        return true;
      }
      default: {
        const known = SLASH.map(([u]) => u.split(" ")[0]?.slice(1) ?? "");
        out.error(`${out.paint("red", "strata:")} no command /${name}; ${known.map((k) => `/${k}`).join(" ")} (/help)`);
        return true;
      }
    }
  };

  let pendingLine: string | undefined;
  /** Lines to handle, in order; `ahead` when typed while a turn ran (shown again when it is sent). */
  const queue: { line: string; ahead: boolean }[] = [];
  let ended = false;
  let busy = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const work = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      while (queue.length > 0) {
        const { line, ahead } = queue.shift() as { line: string; ahead: boolean };
        const text = line.trim();
        if (text === "") continue;
        const isSlash = text.startsWith("/") && !text.startsWith("//");
        try {
          if (isSlash) {
            if (!(await slash(text))) {
              ended = true;
              queue.length = 0;
              break;
            }
          } else await send(text.startsWith("//") ? text.slice(1) : text, ahead);
        } catch (e) {
          const { failure } = await import("../failure.ts");
          const [code, message] = failure(e, ctx.dbPath, (ctx.env.STRATA_DEBUG ?? "") !== "");
          out.progressDone();
          out.error(`${out.paint("red", "strata:")} ${message}`);
          // a message that could not be sent is the chat's outcome; a slash command's failure is only reported
          if (!isSlash) lastCode = code;
          if (e instanceof CliError && e.exitCode === EXIT.conflict) {
            // the branch is not ours any more (another process took it): nothing more can be sent
            ended = true;
            queue.length = 0;
            break;
          }
        }
      }
    } finally {
      busy = false;
    }
    if (ended) {
      finish();
      return;
    }
    if (pendingLine !== undefined) {
      const t = pendingLine;
      pendingLine = undefined;
      prompt();
      rl.write(t);
      return;
    }
    prompt();
  };

  rl.on("line", (line) => {
    idleInterrupt = false;
    if (ended) return;
    const goesOn = /(^|[^\\])\\$/.test(line);
    if (pasting || goesOn) {
      continued.push(goesOn && !pasting ? line.slice(0, -1) : line);
      prompt();
      return;
    }
    const whole = continued.length > 0 ? [...continued.splice(0), line].join("\n") : line;
    queue.push({ line: whole, ahead: busy });
    void work();
  });
  rl.on("close", () => {
    ended = true;
    if (tty) out.write("\n");
    const wait = (): void => {
      if (!busy && queue.length === 0) finish();
      else setTimeout(wait, 20);
    };
    // the lines already read are still sent (a script piped in): the chat ends after them, and a
    // message left going on by a last line ending in `\` is sent as it is
    if (!tty && continued.length > 0) queue.push({ line: continued.splice(0).join("\n"), ahead: busy });
    if (!tty && queue.length > 0) void work();
    wait();
  });
  prompt();
  try {
    await done;
  } finally {
    rl.close();
    if (tty) process.stdout.write("\x1b[?2004l");
    process.off("SIGINT", onInterrupt);
    ctx.signal.removeEventListener("abort", stopOnParent);
    await release();
  }
  if (held !== undefined) {
    const h = held;
    out.info(
      out.paint(
        "dim",
        `left ${h.handle}@${h.session.branch} at event ${h.session.head.id}; strata chat ${h.handle}${h.session.branch === "main" ? "" : `@${h.session.branch}`} comes back to it`,
      ),
    );
  }
  return lastCode;
}

/** The text of the user message a `turn.user` event inserted. */
function messageOf(event: StoredEvent): string | undefined {
  const d = decodeEvent(event);
  if (d.kind !== "patch") return undefined;
  for (const op of d.ops)
    if (op[0] === "ins" && op[3].tag === TAG.turn && op[3].attrs?.[ATTR.role] === ROLE.user)
      return op[3].children?.find((c) => c.tag === TAG.text)?.text;
  return undefined;
}
