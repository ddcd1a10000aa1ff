/**
 * A realistic session for the conversation view's tests (IN-26, IN-27), recorded by the real loop
 * (`runAgent`) with the built-in workspace tools on a real directory (so file effects are in the
 * log, WS-22) and a scripted model: reasoning, messages, a read, an edit and a new file (file
 * diffs), a streamed shell command, a call to an unknown tool and one with invalid arguments (not
 * executed), a tool that throws (failed), hostile text from the model and from a tool, a submit;
 * then a second run cancelled while its command runs (interrupted, cancelled); and a branch `alt`
 * forked after the first run with a reply of its own.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Model,
  type ModelEvent,
  type ModelRequest,
  runAgent,
  ToolRegistry,
  type ToolSpec,
  WorkspaceTracker,
  workspaceTools,
} from "@strata/agent";
import { select } from "@strata/dom";
import { Session } from "@strata/engine";
import { type EventMeta, openStore, type Store } from "@strata/store";

export const HOSTILE_TEXT = "<script>alert('model')</script><img src=x onerror=alert(9)> \u001b[1mbold\u001b[0m";
export const HOSTILE_OUTPUT = "<img src=y onerror=alert(7)><script>alert(8)</script>";

export interface Step {
  readonly reasoning?: string;
  readonly text: string;
  readonly calls?: readonly { readonly name: string; readonly args: unknown }[];
}

/**
 * Plays `steps` in order within one task: step N answers a request with N assistant messages after
 * its last user message (so each run's model starts at its first step, whatever came before).
 * Text streams in chunks of `chunk` characters, `delayMs` apart.
 */
export class Play implements Model {
  readonly id = "scripted:conversation";
  constructor(
    readonly steps: readonly Step[],
    readonly delayMs = 0,
    readonly chunk = 24,
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const lastUser = request.messages.findLastIndex((m) => m.role === "user");
    const n = request.messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
    const step = this.steps[n] ?? { text: "done" };
    const pause = () => (this.delayMs > 0 ? new Promise((r) => setTimeout(r, this.delayMs)) : Promise.resolve());
    if (step.reasoning !== undefined) yield { type: "reasoning", delta: step.reasoning };
    for (let i = 0; i < step.text.length; i += this.chunk) {
      await pause();
      yield { type: "text", delta: step.text.slice(i, i + this.chunk) };
    }
    for (const [i, c] of (step.calls ?? []).entries()) {
      yield { type: "tool-call", index: i, id: `call_${n}_${i}`, name: c.name };
      yield { type: "tool-arguments", index: i, delta: JSON.stringify(c.args) };
    }
    yield { type: "usage", inputTokens: 100 + 40 * n, outputTokens: 12 + step.text.length };
    yield { type: "done", finishReason: (step.calls ?? []).length > 0 ? "tool_calls" : "stop" };
  }
}

export const GREET_V1 = 'export function greet(name: string): string {\n  return "Helo, " + name + "!";\n}\n';

/** The built-in tools on `root`, and two of the test's own: one answering hostile text, one that throws. */
export function tools(root: string): ToolRegistry {
  const extra: ToolSpec[] = [
    {
      name: "fetch_page",
      description: "fetch a web page",
      parameters: { type: "object", properties: { url: { type: "string" } } },
      replayPolicy: "safe",
      handler: async () => HOSTILE_OUTPUT,
    },
    {
      name: "lint",
      description: "lint the workspace",
      parameters: { type: "object" },
      handler: async () => {
        throw new TypeError("lint crashed: cannot read properties of undefined");
      },
    },
  ];
  return new ToolRegistry([...workspaceTools({ root }), ...extra]);
}

export const FIRST_RUN: readonly Step[] = [
  {
    reasoning: "The user wants a typo fixed. Read the file first.",
    text: "Let me look at the greeting first.",
    calls: [{ name: "read_file", args: { path: "src/greet.ts" } }],
  },
  {
    text: "Found it: 'Helo'. Fixing the typo and noting it in CHANGES.md.",
    calls: [
      { name: "edit_file", args: { path: "src/greet.ts", old: "Helo", new: "Hello" } },
      { name: "write_file", args: { path: "CHANGES.md", content: "# Changes\n\n- greet: fixed the 'Helo' typo\n" } },
    ],
  },
  {
    text: "Checking that it still builds.",
    calls: [
      { name: "run", args: { command: "echo compiling src/greet.ts; echo 'built 1 file'" } },
      { name: "deploy", args: { target: "prod" } },
      { name: "read_file", args: { file: "oops" } },
    ],
  },
  {
    text: `The docs page says: ${HOSTILE_TEXT}`,
    calls: [
      { name: "fetch_page", args: { url: "https://example.com/docs" } },
      { name: "lint", args: {} },
    ],
  },
  { text: "All done: the typo is fixed and noted.", calls: [{ name: "submit", args: { summary: "fixed the greeting" } }] },
];

export interface ConversationFixture {
  readonly dir: string;
  /** The workspace directory the tools act on. */
  readonly root: string;
  readonly path: string;
  readonly store: Store;
  readonly session: Session;
  /** The first run's stop, where `alt` forks. */
  readonly firstStop: EventMeta;
  cleanup(): void;
}

export async function conversationSession(): Promise<ConversationFixture> {
  const dir = mkdtempSync(join(tmpdir(), "strata-inspector-conv-"));
  const root = join(dir, "ws");
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src", "greet.ts"), GREET_V1);
  writeFileSync(join(root, "README.md"), "# greet\n\nSays hello.\n");
  const path = join(dir, "s.db");
  const store = openStore(path);
  const session = Session.create(store, { title: "fix the greeting" });
  const registry = tools(root);
  const workspace = new WorkspaceTracker(root, store);
  await runAgent(session, {
    model: new Play(FIRST_RUN),
    registry,
    workspace,
    task: "Fix the typo in the greeting (src/greet.ts) and note it in CHANGES.md.",
  });
  const firstStop = session.head;
  // a second run, cancelled while its command runs: the call is interrupted, the run cancelled
  const abort = new AbortController();
  const second = runAgent(session, {
    model: new Play([{ text: "Running the slow test suite.", calls: [{ name: "run", args: { command: "echo started; sleep 30" } }] }]),
    registry,
    workspace,
    task: "Run the slow tests.",
    signal: abort.signal,
  });
  for (let i = 0; i < 400 && select(session.tree, "call[status=running]").length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  await new Promise((r) => setTimeout(r, 300));
  abort.abort();
  await second;
  // another branch after the first run, with a reply of its own
  const alt = session.fork(firstStop.id, { name: "alt" });
  await runAgent(alt, { model: new Play([{ text: "ALT-BRANCH: nothing else to do." }]), registry, task: "Anything else?" });
  return {
    dir,
    root,
    path,
    store,
    session,
    firstStop,
    cleanup: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
