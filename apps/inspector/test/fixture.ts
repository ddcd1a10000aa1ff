/** A recorded session for the inspector tests: a run with calls, one tool output hostile to HTML. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Model, type ModelEvent, type ModelRequest, runAgent, ToolRegistry } from "@strata/agent";
import { Session } from "@strata/engine";
import { openStore, type Store } from "@strata/store";

export const HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>\u001b[31mred\u001b[0m";

/** Plays `turns` by the number of assistant messages; each turn calls one tool. */
export class Scripted implements Model {
  readonly id = "scripted:inspector";
  constructor(
    readonly turns: readonly { text: string; tool?: string; args?: unknown }[],
    readonly delayMs = 0,
  ) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const n = request.messages.filter((m) => m.role === "assistant").length;
    const t = this.turns[n] ?? { text: "done" };
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    yield { type: "text", delta: t.text };
    if (t.tool !== undefined) {
      yield { type: "tool-call", index: 0, id: `call_${n}`, name: t.tool };
      yield { type: "tool-arguments", index: 0, delta: JSON.stringify(t.args ?? {}) };
    }
    yield { type: "done", finishReason: t.tool ? "tool_calls" : "stop" };
  }
}

export const registry = new ToolRegistry([
  { name: "fetch", description: "fetch a page", parameters: { type: "object" }, replayPolicy: "safe", handler: async () => HOSTILE },
  {
    name: "todo_add",
    description: "add a todo",
    parameters: { type: "object" },
    replayPolicy: "safe",
    handler: async (a, ctx) => {
      ctx.stage?.((d) => {
        const meta = d.tree.root.children.find((c) => c.tag === "meta");
        if (meta !== undefined) d.appendChild(meta.id, { tag: "todo", attrs: { status: "pending" }, text: String(a.text) });
      });
      return "added";
    },
  },
  { name: "submit", description: "finish", parameters: { type: "object" }, completesRun: true, handler: async () => "submitted" },
]);

export interface Fixture {
  readonly dir: string;
  readonly path: string;
  readonly store: Store;
  readonly session: Session;
  cleanup(): void;
}

export async function recordedSession(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "strata-inspector-"));
  const path = join(dir, "s.db");
  const store = openStore(path);
  const session = Session.create(store, { title: "inspector fixture" });
  await runAgent(session, {
    model: new Scripted([
      { text: "Looking it up.", tool: "fetch", args: { url: "https://example.com" } },
      { text: "Noting it.", tool: "todo_add", args: { text: "read the page" } },
      { text: "Finished.", tool: "submit", args: {} },
    ]),
    registry,
    task: "Fetch the page and note a todo",
  });
  // a fork with a different ending, so the graph has two lanes
  const at = session.log().find((e) => e.label === "turn.user")?.id;
  if (at !== undefined) session.fork(at, { name: "alt" });
  writeFileSync(join(dir, "README"), "inspector test fixture");
  return { dir, path, store, session, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
