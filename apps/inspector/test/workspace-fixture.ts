/**
 * Sessions whose trees record a workspace, for the inspector's file tests (IN-22 … IN-25). The
 * record is written as the contract of issue 13 fixes it (`<meta><workspace dir><file path hash
 * mode size/>…`, the bytes in the store's blobs) with plain tree edits, so these tests read what
 * any writer of that format — the tracker, an import, a hand-made bundle — leaves in the log.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NodeId, TreeDraft } from "@strata/dom";
import { Session } from "@strata/engine";
import { type EventMeta, openStore, type Store } from "@strata/store";

export type Mode = "644" | "755" | "link";

/** One file change: `bytes` null deletes the path; `mode` defaults to the path's mode, else 644. */
export interface Write {
  readonly path: string;
  readonly bytes: string | Uint8Array | null;
  readonly mode?: Mode;
}

export const sha256 = (bytes: string | Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
export const byteLength = (bytes: string | Uint8Array): number => (typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.length);

function metaOf(d: TreeDraft): NodeId {
  const meta = d.tree.root.children.find((c) => c.tag === "meta");
  if (meta === undefined) throw new Error("the session tree has no <meta>");
  return meta.id;
}

/** `<meta><workspace>`, made when the tree has none yet; its `dir` set to `dir` (a fork records its own). */
function workspaceOf(d: TreeDraft, dir: string): NodeId {
  const meta = d.tree.get(metaOf(d));
  const ws = meta?.children.find((c) => c.tag === "workspace");
  if (ws === undefined) return d.appendChild(metaOf(d), { tag: "workspace", attrs: { dir, cap: String(16 * 1024 * 1024) } });
  if (ws.attrs.dir !== dir) d.set(ws.id, "dir", dir);
  return ws.id;
}

/**
 * Commits `writes` as one event labelled `label`: bytes go to the blob store, each path's
 * `<file>` is inserted, set or removed. `hash` overrides a write's recorded hash (a record whose
 * bytes the store does not hold).
 */
export function commitFiles(session: Session, writes: readonly Write[], label: string, dir = "/work/ws"): EventMeta {
  const blobs = writes.map((w) => (w.bytes === null ? undefined : session.store.putBlob(w.bytes)));
  return session.commit(
    (d) => {
      const ws = workspaceOf(d, dir);
      const files = new Map((d.tree.get(ws)?.children ?? []).map((c) => [c.attrs.path, c] as const));
      writes.forEach((w, i) => {
        const el = files.get(w.path);
        if (w.bytes === null) {
          if (el === undefined) throw new Error(`cannot delete ${w.path}: not recorded`);
          d.remove(el.id);
          return;
        }
        const attrs = {
          path: w.path,
          hash: blobs[i] as string,
          mode: w.mode ?? (el?.attrs.mode as Mode | undefined) ?? "644",
          size: String(byteLength(w.bytes)),
        };
        if (el === undefined) d.appendChild(ws, { tag: "file", attrs });
        else for (const [k, v] of Object.entries(attrs)) if (el.attrs[k] !== v) d.set(el.id, k, v);
      });
    },
    { label },
  );
}

/** A `<file>` element written as is (malformed or naming bytes never stored), in its own event. */
export function commitRawFile(session: Session, attrs: Record<string, string>, label = "workspace.raw"): EventMeta {
  return session.commit((d) => void d.appendChild(workspaceOf(d, "/work/ws"), { tag: "file", attrs }), { label });
}

export const HOSTILE_FILE = "<img src=x onerror=alert(1)>\n<script>alert(3)</script>\n\u001b[31mred\u001b[0m\n";
export const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
export const MAIN_V1 = "export function main() {\n  console.log('one');\n  return 1;\n}\n";
export const MAIN_V2 = "export function main() {\n  console.log('two');\n  return 2;\n}\n";

export interface WorkspaceFixture {
  readonly dir: string;
  readonly path: string;
  readonly store: Store;
  readonly session: Session;
  /** The events, by what they did. */
  readonly genesis: EventMeta;
  readonly baseline: EventMeta;
  readonly edit: EventMeta;
  readonly more: EventMeta;
  cleanup(): void;
}

/**
 * A session with a note, then a baseline of six files (text, an executable, a binary, a symlink,
 * a hostile text, a path with a space and an accent), an edit (one text modified, one file
 * added), and a second change (a binary changed, a mode changed, a file deleted).
 */
export function workspaceSession(): WorkspaceFixture {
  const dir = mkdtempSync(join(tmpdir(), "strata-inspector-ws-"));
  const path = join(dir, "s.db");
  const store = openStore(path);
  const session = Session.create(store, { title: "workspace fixture" });
  const genesis = session.head;
  session.commit((d) => void d.appendChild(metaOf(d), { tag: "note", text: "before the workspace" }), { label: "note.add" });
  const baseline = commitFiles(
    session,
    [
      { path: "src/main.ts", bytes: MAIN_V1 },
      { path: "bin/run.sh", bytes: "#!/bin/sh\necho run\n", mode: "755" },
      { path: "assets/logo.png", bytes: PNG },
      { path: "link", bytes: "src/main.ts", mode: "link" },
      { path: "hostile.txt", bytes: HOSTILE_FILE },
      { path: "docs/a file é.md", bytes: "# notes\n" },
    ],
    "workspace.baseline",
  );
  const edit = commitFiles(
    session,
    [
      { path: "src/main.ts", bytes: MAIN_V2 },
      { path: "NEW.md", bytes: "added\nby the edit\n" },
    ],
    "call.end",
  );
  const more = commitFiles(
    session,
    [
      { path: "assets/logo.png", bytes: Uint8Array.from([...PNG, 1, 2, 3]) },
      { path: "hostile.txt", bytes: HOSTILE_FILE, mode: "755" },
      { path: "docs/a file é.md", bytes: null },
    ],
    "call.end",
  );
  return {
    dir,
    path,
    store,
    session,
    genesis,
    baseline,
    edit,
    more,
    cleanup: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
