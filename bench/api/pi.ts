/**
 * Pi's session manager (`@mariozechner/pi-coding-agent`, JSONL session files) as the reference
 * column of the public-API benchmarks. Pi is optional: it is imported from the directory in env
 * `BENCH_PI_DIR` (the package's own directory, or a project directory with it in
 * `node_modules/`), else resolved from bench/ as a normal dependency; when it is not there the
 * column says "not installed" and nothing fails.
 *
 * What is loaded is the package's `dist/core/session-manager.js`, the module its entry point
 * re-exports `SessionManager` and `buildSessionContext` from (the entry point also loads the
 * agent's TUI and model providers: 2.7 s and ~100 MB more per process, nothing a session read uses).
 *
 * Run as a script it is a fresh-process probe, like bench/api/probe.ts:
 *
 *   node --import tsx bench/api/pi.ts <mode> <args…>
 *
 *   write <dir> <steps>     `SessionManager.create(cwd, dir)`, per step `appendMessage` of the
 *                           assistant message (text + tool call) and of the tool result, timed in blocks
 *   all <file>              `SessionManager.open(file)` + `buildSessionContext()`: every message with its content
 *   half <file> <entry>     `SessionManager.open(file)` + `branch(entry)` + `buildSessionContext()` (the state after step N/2)
 *   fork <file> <entry>     `SessionManager.open(file)` + `branch(entry)` + one step appended (two entries)
 *
 * Output: one JSON line on stdout.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { isMain } from "../lib/harness.ts";
import { peakRssKb } from "../lib/rss.ts";
import { BLOCK, SEED, type Step, steps } from "./workload.ts";

const PACKAGE = "@mariozechner/pi-coding-agent";

/** The part of Pi's message shapes a step uses (pi-ai's AssistantMessage / ToolResultMessage). */
interface PiContent {
  readonly type: string;
  readonly text?: string;
  readonly arguments?: Record<string, unknown>;
}
interface PiMessage {
  readonly role: string;
  readonly content: string | readonly PiContent[];
}
/** The methods of Pi's `SessionManager` the benchmark calls. */
export interface PiSessionManager {
  appendMessage(message: unknown): string;
  buildSessionContext(): { messages: PiMessage[] };
  branch(id: string): void;
  getSessionFile(): string | undefined;
}
export interface PiModule {
  readonly SessionManager: {
    create(cwd: string, sessionDir?: string): PiSessionManager;
    open(path: string, sessionDir?: string): PiSessionManager;
  };
}

export interface PiStatus {
  readonly installed: boolean;
  readonly version: string;
  /** The module file loaded, or why none was. */
  readonly detail: string;
}

/** Where Pi's package directory is, or undefined. */
function packageDir(): string | undefined {
  const env = process.env.BENCH_PI_DIR;
  if (env !== undefined && env !== "") {
    for (const d of [env, join(env, "node_modules", PACKAGE)]) {
      const pj = join(d, "package.json");
      if (existsSync(pj) && (JSON.parse(readFileSync(pj, "utf8")) as { name?: string }).name === PACKAGE) return d;
    }
    return undefined;
  }
  // Resolved from bench/ like any dependency; the package only exports ESM "import", so find its
  // package.json through the resolution paths rather than `require.resolve` of the entry.
  const require = createRequire(join(import.meta.dirname, "..", "package.json"));
  for (const base of require.resolve.paths(PACKAGE) ?? []) {
    const pj = join(base, PACKAGE, "package.json");
    if (existsSync(pj)) return dirname(pj);
  }
  return undefined;
}

/** Whether Pi is installed, which version, and where from (without importing it). */
export function piStatus(): PiStatus {
  const dir = packageDir();
  if (dir === undefined)
    return {
      installed: false,
      version: "",
      detail:
        process.env.BENCH_PI_DIR === undefined
          ? `${PACKAGE} is not installed`
          : `BENCH_PI_DIR=${process.env.BENCH_PI_DIR} holds no ${PACKAGE}`,
    };
  const version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
  const file = join(dir, "dist", "core", "session-manager.js");
  if (!existsSync(file)) return { installed: false, version, detail: `${PACKAGE} ${version} has no dist/core/session-manager.js` };
  return { installed: true, version, detail: file };
}

/** Imports Pi's session manager; undefined when it is not installed. */
export async function loadPi(): Promise<PiModule | undefined> {
  const status = piStatus();
  if (!status.installed) return undefined;
  return (await import(pathToFileURL(status.detail).href)) as PiModule;
}

const USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** A step as Pi stores it: the assistant message with its tool call, then the tool result. */
export function piMessages(s: Step): [unknown, unknown] {
  const id = `call_${s.i}`;
  return [
    {
      role: "assistant",
      content: [
        { type: "text", text: s.assistant },
        { type: "toolCall", id, name: "read_file", arguments: JSON.parse(s.args) as Record<string, unknown> },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "bench",
      usage: USAGE,
      stopReason: "toolUse",
      timestamp: Date.now(),
    },
    {
      role: "toolResult",
      toolCallId: id,
      toolName: "read_file",
      content: [{ type: "text", text: s.output }],
      isError: false,
      timestamp: Date.now(),
    },
  ];
}

/** Messages and characters of content (a tool call's content is its arguments as JSON text). */
function contentOf(messages: readonly PiMessage[]): { messages: number; chars: number } {
  const out = { messages: 0, chars: 0 };
  for (const m of messages) {
    if (typeof m.content === "string") {
      out.messages++;
      out.chars += m.content.length;
      continue;
    }
    for (const c of m.content) {
      out.messages++;
      out.chars += c.type === "toolCall" ? JSON.stringify(c.arguments).length : (c.text ?? "").length;
    }
  }
  return out;
}

function emit(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...result, maxRssKb: peakRssKb() })}\n`);
}

async function probe(mode: string, a: string, b: string | undefined): Promise<void> {
  const pi = await loadPi();
  if (pi === undefined) throw new Error(piStatus().detail);
  switch (mode) {
    case "write": {
      const count = Number(b);
      const sm = pi.SessionManager.create(a, a);
      const append: number[] = [];
      let half = "";
      const gen = steps(count);
      for (let done = 0; done < count; done += BLOCK) {
        const block: { i: number; messages: [unknown, unknown] }[] = [];
        for (let i = 0; i < BLOCK && done + i < count; i++) {
          const step = gen.next().value as Step;
          block.push({ i: step.i, messages: piMessages(step) });
        }
        const t0 = performance.now();
        for (const { i, messages } of block) {
          sm.appendMessage(messages[0]);
          const id = sm.appendMessage(messages[1]);
          if (i === Math.floor(count / 2) - 1) half = id;
        }
        append.push(((performance.now() - t0) / block.length) * 1000);
      }
      emit({ file: sm.getSessionFile(), half, append });
      return;
    }
    case "all":
    case "half": {
      const t0 = performance.now();
      const sm = pi.SessionManager.open(a);
      const t1 = performance.now();
      // The state at an entry: Pi moves its leaf there (memory only, as its tree navigation does).
      if (mode === "half") sm.branch(b as string);
      const got = contentOf(sm.buildSessionContext().messages);
      const t2 = performance.now();
      emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1, ...got });
      return;
    }
    case "fork": {
      const step = piMessages({ ...(steps(1, 0, SEED + 1).next().value as Step), i: 1_000_000 });
      const t0 = performance.now();
      const sm = pi.SessionManager.open(a);
      const t1 = performance.now();
      sm.branch(b as string);
      sm.appendMessage(step[0]);
      sm.appendMessage(step[1]);
      const t2 = performance.now();
      emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1 });
      return;
    }
    default:
      throw new Error(`unknown Pi probe mode ${mode}; see the header of bench/api/pi.ts`);
  }
}

if (isMain(import.meta.url)) {
  const [mode, a, b] = process.argv.slice(2) as [string, string, string | undefined];
  await probe(mode, a, b);
}
