/** Shared fixtures of the bundle tests: real SQLite files in temp dirs and a session with everything a bundle carries. */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodeSpec, nodeId } from "@strata/dom";
import { openStore, type SessionId, type Store } from "@strata/store";
import { Session } from "../src/index.ts";

const dirs: string[] = [];
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "strata-bundle-"));
  dirs.push(d);
  return d;
}
export function cleanup(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export function fileStore(name = "s.db"): { store: Store; path: string } {
  const path = join(tempDir(), name);
  return { store: openStore(path), path };
}

export function sha(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** A sha256 that names no blob (as a request's own hash does). */
export const NOT_A_BLOB = "f".repeat(64);

/**
 * A session with recorded inputs (templates, context, a tool roster: blobs), a long text, more than
 * one snapshot interval of events, a fork with its own events and a rewind (a kept branch).
 */
/**
 * Recorded inputs as `@strata/agent` writes them (the session core does not know the agent): a
 * `<config>` in `<meta>` whose template, context file and tool name blobs (EN-33's `BLOB_REFS`).
 */
function recordConfig(s: Session, store: Store, system: string): void {
  const blob = (text: string) => ({ hash: store.putBlob(text), chars: String(text.length) });
  const config: NodeSpec = {
    tag: "config",
    children: [
      { tag: "templates", children: [{ tag: "template", attrs: { name: "system", ...blob(system) } }] },
      { tag: "context", children: [{ tag: "file", attrs: { path: "AGENTS.md", ...blob("Be brief.\n") } }] },
      {
        tag: "tools",
        children: [
          {
            tag: "tool",
            attrs: {
              name: "read_file",
              version: "1",
              replay: "safe",
              "completes-run": "false",
              description: store.putBlob("Reads a file."),
              schema: store.putBlob('{"type":"object"}'),
            },
          },
        ],
      },
    ],
  };
  s.commit([["ins", nodeId(2), null, config]], { label: "inputs.record" });
}

/** A changed template, as a later run records it: `set` ops naming the new blob. */
function updateTemplate(s: Session, store: Store, system: string): void {
  const template = nodeId(s.selectOne("config template")?.id as number);
  const { hash, chars } = { hash: store.putBlob(system), chars: String(system.length) };
  s.commit(
    [
      ["set", template, "hash", hash],
      ["set", template, "chars", chars],
    ],
    { label: "inputs.update" },
  );
}

export function richSession(store: Store): SessionId {
  const s = Session.create(store, { title: "rich", metadata: { purpose: "bundle tests", nested: { n: 1 } } });
  recordConfig(s, store, "You are a careful assistant. {{ count(select('todo item')) }} items.");
  s.commit([["ins", nodeId(2), null, { tag: "todo" }]], { label: "todo.init" });
  const todo = s.selectOne("todo")?.id as number;
  const fork = s.commit([["ins", nodeId(3), null, { tag: "note", text: "long ".repeat(60) }]], { label: "note", by: "e1" });
  for (let i = 0; i < 140; i++)
    s.commit([["ins", nodeId(todo), null, { tag: "item", attrs: { status: i % 2 ? "completed" : "pending" }, text: `item ${i}` }]], {
      label: "todo.add",
    });
  // the template changes: a `set` op names the new blob (its element's tag is in the tree)
  updateTemplate(s, store, "You are a careful assistant, version 2.");
  // a request record (PR-15): `system`, `tools`, `settings` name blobs, `hash` and `chain` do not
  s.commit(
    [
      [
        "ins",
        nodeId(3),
        null,
        {
          tag: "turn",
          attrs: { role: "assistant" },
          children: [
            {
              tag: "request",
              attrs: {
                hash: NOT_A_BLOB,
                system: store.putBlob("the system text"),
                tools: store.putBlob("[]"),
                settings: store.putBlob("{}"),
                chain: NOT_A_BLOB,
              },
            },
          ],
        },
      ],
    ],
    { label: "turn.start" },
  );
  // an attribute this strata does not know as a reference, naming a stored blob: carried and kept
  s.commit([["ins", nodeId(2), null, { tag: "custom", attrs: { digest: store.putBlob("kept for whoever reads it") } }]], {
    label: "custom",
  });
  const branch = s.fork(fork.id, { name: "try-2" });
  branch.commit([["ins", nodeId(3), null, { tag: "alt", text: "on the fork" }]], { label: "alt" });
  const back = s.log({ limit: 20 }).at(-1)?.id as never;
  s.rewind(back);
  s.commit([["ins", nodeId(3), null, { tag: "after-rewind" }]], { label: "after" });
  return s.id;
}
