/**
 * IN-22 … IN-24: the workspace at an event, one file's content, and the file diff between two
 * events — on the real server over a real SQLite store whose session records a workspace.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { applyFileChanges, WorkspaceTracker } from "@strata/agent";
import { Session } from "@strata/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIFF_BUDGET, DIFF_FILE_MAX } from "../src/file-diff.ts";
import { FILE_TEXT_MAX } from "../src/files.ts";
import {
  type ErrorResponse,
  type FileDiffResponse,
  type FileResponse,
  type FilesResponse,
  pathOf,
  type Running,
  STATIC_DIR,
  startServer,
} from "../src/index.ts";
import {
  byteLength,
  commitFiles,
  commitRawFile,
  HOSTILE_FILE,
  MAIN_V1,
  MAIN_V2,
  PNG,
  sha256,
  type WorkspaceFixture,
  workspaceSession,
} from "./workspace-fixture.ts";

let fx: WorkspaceFixture;
let srv: Running;
beforeAll(async () => {
  fx = workspaceSession();
  srv = await startServer({ store: fx.store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
});
afterAll(async () => {
  await srv.close();
  fx.cleanup();
});

async function call<T>(path: string, query: Record<string, string | number> = {}): Promise<{ status: number; body: T }> {
  const q = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await fetch(new URL(`${path}?${q}`, srv.url));
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  return { status: res.status, body: (await res.json()) as T };
}
const ok = async <T>(path: string, query: Record<string, string | number> = {}): Promise<T> => {
  const r = await call<T>(path, query);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const fails = async (path: string, query: Record<string, string | number> = {}): Promise<{ status: number; message: string }> => {
  const r = await call<ErrorResponse>(path, query);
  return { status: r.status, message: r.body.error.message };
};

const files = () => pathOf("files", { session: fx.session.id });
const file = () => pathOf("file", { session: fx.session.id });
const filediff = () => pathOf("filediff", { session: fx.session.id });

describe("IN-22 the workspace at an event", () => {
  it("lists path, mode, size and the sha256 of the bytes, in path order, at each event", async () => {
    const base = await ok<FilesResponse>(files(), { at: fx.baseline.id });
    expect(base).toMatchObject({ event: fx.baseline.id, tracked: true, dir: "/work/ws", total: 6, offset: 0 });
    expect(base.files.map((f) => f.path)).toEqual([
      "assets/logo.png",
      "bin/run.sh",
      "docs/a file é.md",
      "hostile.txt",
      "link",
      "src/main.ts",
    ]);
    expect(base.files.find((f) => f.path === "src/main.ts")).toEqual({
      path: "src/main.ts",
      mode: "644",
      size: byteLength(MAIN_V1),
      hash: sha256(MAIN_V1),
    });
    expect(base.files.find((f) => f.path === "bin/run.sh")?.mode).toBe("755");
    expect(base.files.find((f) => f.path === "link")).toEqual({ path: "link", mode: "link", size: 11, hash: sha256("src/main.ts") });
    expect(base.files.find((f) => f.path === "assets/logo.png")).toMatchObject({ size: PNG.length, hash: sha256(PNG) });
    expect(base.bytes).toBe(base.files.reduce((n, f) => n + f.size, 0));
    // later events: what each one's tree records
    const edit = await ok<FilesResponse>(files(), { at: fx.edit.id });
    expect(edit.files.map((f) => f.path)).toContain("NEW.md");
    expect(edit.files.find((f) => f.path === "src/main.ts")?.hash).toBe(sha256(MAIN_V2));
    const head = await ok<FilesResponse>(files());
    expect(head.event).toBe(fx.session.head.id);
    expect(head.files.map((f) => f.path)).not.toContain("docs/a file é.md");
    expect(head.files.find((f) => f.path === "hostile.txt")?.mode).toBe("755");
  });

  it("each branch's head by default: a fork's workspace is its own", async () => {
    const fork = fx.session.fork(fx.baseline.id, { name: "alt-files" });
    const e = commitFiles(fork, [{ path: "FORK.md", bytes: "fork only\n" }], "call.end", "/work/ws-alt");
    const alt = await ok<FilesResponse>(files(), { branch: "alt-files" });
    expect({ event: alt.event, dir: alt.dir, total: alt.total }).toEqual({ event: e.id, dir: "/work/ws-alt", total: 7 });
    expect(alt.files.map((f) => f.path)).toContain("FORK.md");
    expect((await ok<FilesResponse>(files())).files.map((f) => f.path)).not.toContain("FORK.md");
    const d = await ok<FileDiffResponse>(filediff(), { branch: "alt-files", from: fx.baseline.id });
    expect({ to: d.to, changes: d.changes.map((c) => `${c.change} ${c.path}`) }).toEqual({ to: e.id, changes: ["added FORK.md"] });
  });

  it("before the baseline the tree records no workspace: tracked is false and there are no files", async () => {
    for (const at of [fx.genesis.id, fx.baseline.prior as number])
      expect(await ok<FilesResponse>(files(), { at })).toEqual({
        event: at,
        tracked: false,
        dir: null,
        total: 0,
        bytes: 0,
        offset: 0,
        files: [],
      });
  });

  it("pages by offset and limit (default 1000, at most 5000), so one answer is bounded whatever the workspace holds", async () => {
    const big = Session.create(fx.store, { title: "wide workspace" });
    const n = 6100;
    commitFiles(
      big,
      Array.from({ length: n }, (_, i) => ({ path: `f/${String(i).padStart(5, "0")}.txt`, bytes: `${i}\n` })),
      "workspace.baseline",
    );
    const path = pathOf("files", { session: big.id });
    const first = await ok<FilesResponse>(path);
    expect({ total: first.total, shown: first.files.length, first: first.files[0]?.path }).toEqual({
      total: n,
      shown: 1000,
      first: "f/00000.txt",
    });
    const last = await ok<FilesResponse>(path, { offset: 6000, limit: 5000 });
    expect(last.files.map((f) => f.path)).toEqual(Array.from({ length: 100 }, (_, i) => `f/${String(6000 + i).padStart(5, "0")}.txt`));
    expect((await ok<FilesResponse>(path, { limit: 5000 })).files).toHaveLength(5000);
    expect((await ok<FilesResponse>(path, { offset: 99999 })).files).toEqual([]);
  });

  it("IN-6 errors: 404 unknown session, event, branch; 400 an event id or a count that is not one", async () => {
    const s = fx.session.id;
    expect(await fails(pathOf("files", { session: "NOPE" }))).toEqual({ status: 404, message: "no session NOPE" });
    expect(await fails(files(), { at: 999999 })).toEqual({ status: 404, message: `event 999999 is not an event of session ${s}` });
    expect(await fails(files(), { branch: "nope" })).toEqual({ status: 404, message: `session ${s} has no branch "nope"` });
    expect(await fails(files(), { at: "abc" })).toEqual({ status: 400, message: '"abc" is not an event id' });
    for (const [name, value, range] of [
      ["limit", "0", "1 to 5000"],
      ["limit", "5001", "1 to 5000"],
      ["limit", "ten", "1 to 5000"],
      ["offset", "-1", `0 to ${Number.MAX_SAFE_INTEGER}`],
      ["offset", "1.5", `0 to ${Number.MAX_SAFE_INTEGER}`],
    ] as const)
      expect(await fails(files(), { [name]: value })).toEqual({
        status: 400,
        message: `?${name}=${JSON.stringify(value)} is not a count from ${range}`,
      });
  });

  it("a malformed <workspace> record is 422 workspace-error naming the element, and the server goes on", async () => {
    const bad = Session.create(fx.store, { title: "bad record" });
    commitFiles(bad, [{ path: "ok.txt", bytes: "ok\n" }], "workspace.baseline");
    commitRawFile(bad, { path: "x.txt", hash: "not-a-hash", mode: "644", size: "1" });
    const r = await call<ErrorResponse>(pathOf("files", { session: bad.id }));
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ status: 422, code: "workspace-error", reason: "bad-entry" });
    expect(r.body.error.message).toMatch(/workspace record cannot be read here: <file> element \d+ \(x\.txt\) has no sha256 hash/);
    expect((await call(pathOf("filediff", { session: bad.id }), { from: bad.head.prior as number })).status).toBe(422);
    expect((await ok<FilesResponse>(files())).total).toBe(6);
  });
});

describe("IN-23 one file's content at an event", () => {
  it("text is sent as text, as it was at that event", async () => {
    const at1 = await ok<FileResponse>(file(), { at: fx.baseline.id, path: "src/main.ts" });
    expect(at1).toEqual({
      event: fx.baseline.id,
      file: { path: "src/main.ts", mode: "644", size: byteLength(MAIN_V1), hash: sha256(MAIN_V1) },
      content: { kind: "text", text: MAIN_V1 },
    });
    expect((await ok<FileResponse>(file(), { path: "src/main.ts" })).content).toEqual({ kind: "text", text: MAIN_V2 });
    // a path with a space and an accent, percent-encoded in the query
    expect((await ok<FileResponse>(file(), { at: fx.edit.id, path: "docs/a file é.md" })).content).toEqual({
      kind: "text",
      text: "# notes\n",
    });
    expect((await ok<FileResponse>(file(), { path: "hostile.txt" })).content).toEqual({ kind: "text", text: HOSTILE_FILE });
  });

  it("binary bytes are never sent: size and hash only; a symlink is its target", async () => {
    const res = await fetch(new URL(`${file()}?path=assets/logo.png&at=${fx.baseline.id}`, srv.url));
    const raw = await res.text();
    expect(JSON.parse(raw)).toEqual({
      event: fx.baseline.id,
      file: { path: "assets/logo.png", mode: "644", size: PNG.length, hash: sha256(PNG) },
      content: { kind: "binary" },
    });
    expect(raw).not.toContain("PNG");
    // NUL-free bytes that are not UTF-8 are binary too
    commitFiles(fx.session, [{ path: "latin1.txt", bytes: Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) }], "call.end");
    expect((await ok<FileResponse>(file(), { path: "latin1.txt" })).content).toEqual({ kind: "binary" });
    // valid UTF-8 with a NUL byte is binary (git's test)
    commitFiles(fx.session, [{ path: "nul.bin", bytes: "a\u0000b\n" }], "call.end");
    expect((await ok<FileResponse>(file(), { path: "nul.bin" })).content).toEqual({ kind: "binary" });
    expect((await ok<FileResponse>(file(), { path: "link" })).content).toEqual({ kind: "link", target: "src/main.ts" });
  });

  it("is bounded: a file over the bound is 413 with its size and hash", async () => {
    const big = "x".repeat(FILE_TEXT_MAX + 1);
    commitFiles(fx.session, [{ path: "big.txt", bytes: big }], "call.end");
    const r = await fails(file(), { path: "big.txt" });
    expect(r).toEqual({
      status: 413,
      message: `"big.txt" at event ${fx.session.head.id} has ${FILE_TEXT_MAX + 1} bytes (sha256 ${sha256(big)}); …/file serves at most ${FILE_TEXT_MAX} (strata checkout writes the whole workspace)`,
    });
  });

  it("IN-6 errors: 400 no path or not a workspace path, 404 a path not recorded there or before the baseline, 500 bytes the store lacks", async () => {
    expect(await fails(file())).toEqual({ status: 400, message: "a file path is required (?path=PATH, relative to the workspace root)" });
    expect(await fails(file(), { path: "/etc/passwd" })).toEqual({
      status: 400,
      message: '"/etc/passwd" is not a workspace path: the path is absolute; workspace paths are relative to the workspace root',
    });
    expect((await fails(file(), { path: "src/../../x" })).status).toBe(400);
    expect(await fails(file(), { path: "NEW.md", at: fx.baseline.id })).toEqual({
      status: 404,
      message: `no file "NEW.md" in the workspace at event ${fx.baseline.id}`,
    });
    expect(await fails(file(), { path: "src/main.ts", at: fx.genesis.id })).toEqual({
      status: 404,
      message: `no file "src/main.ts" at event ${fx.genesis.id}: the session records no workspace there yet (it starts at the workspace.baseline event)`,
    });
    expect((await fails(pathOf("file", { session: "NOPE" }), { path: "a" })).status).toBe(404);
    expect((await fails(file(), { path: "a", at: "x" })).status).toBe(400);
    const ghost = sha256("bytes never stored");
    const e = commitRawFile(fx.session, { path: "ghost.txt", hash: ghost, mode: "644", size: "18" });
    expect(await fails(file(), { path: "ghost.txt" })).toEqual({
      status: 500,
      message: `the store has no bytes for "ghost.txt" at event ${e.id} (blob ${ghost}): the database is damaged or was imported without its blobs`,
    });
    const d = await ok<FileDiffResponse>(filediff(), { from: e.prior as number, to: e.id });
    expect(d.changes).toEqual([
      {
        path: "ghost.txt",
        change: "added",
        before: null,
        after: { path: "ghost.txt", mode: "644", size: 18, hash: ghost },
        delta: { kind: "missing", hashes: [ghost] },
      },
    ]);
  });
});

/** Applies `unified` to `before` with GNU patch in a scratch directory and returns the result. */
function patched(path: string, before: string | undefined, unified: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), "strata-inspector-patch-"));
  try {
    if (before !== undefined) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), before);
    }
    execFileSync("patch", ["-p1", "-s", "-E", "-d", dir], { input: unified });
    try {
      return readFileSync(join(dir, path), "utf8");
    } catch {
      return undefined;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("IN-24 the file diff between two events", () => {
  it("each changed file: added, modified or deleted, with a unified diff for text that patch applies", async () => {
    const d = await ok<FileDiffResponse>(filediff(), { from: fx.baseline.id, to: fx.more.id });
    expect(d).toMatchObject({ from: fx.baseline.id, to: fx.more.id, total: 5, offset: 0 });
    expect(d.changes.map((c) => [c.path, c.change, c.delta.kind])).toEqual([
      ["NEW.md", "added", "text"],
      ["assets/logo.png", "modified", "binary"],
      ["docs/a file é.md", "deleted", "text"],
      ["hostile.txt", "modified", "same"],
      ["src/main.ts", "modified", "text"],
    ]);
    const main = d.changes.find((c) => c.path === "src/main.ts");
    expect(main?.before?.hash).toBe(sha256(MAIN_V1));
    expect(main?.after?.hash).toBe(sha256(MAIN_V2));
    expect(main?.delta).toEqual({
      kind: "text",
      unified: [
        "--- a/src/main.ts",
        "+++ b/src/main.ts",
        "@@ -1,4 +1,4 @@",
        " export function main() {",
        "-  console.log('one');",
        "-  return 1;",
        "+  console.log('two');",
        "+  return 2;",
        " }",
        "",
      ].join("\n"),
      added: 2,
      removed: 2,
      coarse: false,
    });
    // every text delta is a patch that turns the old bytes into the new
    const old: Record<string, string | undefined> = { "src/main.ts": MAIN_V1, "docs/a file é.md": "# notes\n", "NEW.md": undefined };
    const now: Record<string, string | undefined> = {
      "src/main.ts": MAIN_V2,
      "docs/a file é.md": undefined,
      "NEW.md": "added\nby the edit\n",
    };
    for (const c of d.changes)
      if (c.delta.kind === "text")
        expect({ path: c.path, after: patched(c.path, old[c.path], c.delta.unified) }).toEqual({ path: c.path, after: now[c.path] });
    // binary and mode-only changes: the records, never the bytes
    const logo = d.changes.find((c) => c.path === "assets/logo.png");
    expect(logo).toMatchObject({
      before: { size: PNG.length, hash: sha256(PNG) },
      after: { size: PNG.length + 3 },
      delta: { kind: "binary" },
    });
    expect(d.changes.find((c) => c.path === "hostile.txt")).toMatchObject({ before: { mode: "644" }, after: { mode: "755" } });
  });

  it("from a tree without a workspace every file is added; the reverse deletes; equal events differ in nothing", async () => {
    const up = await ok<FileDiffResponse>(filediff(), { from: fx.genesis.id, to: fx.baseline.id });
    expect(up.changes.map((c) => c.change)).toEqual(Array(6).fill("added"));
    expect(up.changes.find((c) => c.path === "src/main.ts")?.delta).toMatchObject({ kind: "text", added: 4, removed: 0 });
    const added = up.changes.find((c) => c.path === "src/main.ts")?.delta;
    expect(added?.kind === "text" ? added.unified : "").toMatch(/^--- \/dev\/null\n\+\+\+ b\/src\/main\.ts\n@@ -0,0 \+1,4 @@\n/);
    const down = await ok<FileDiffResponse>(filediff(), { from: fx.baseline.id, to: fx.genesis.id });
    expect(down.changes.map((c) => c.change)).toEqual(Array(6).fill("deleted"));
    expect(await ok<FileDiffResponse>(filediff(), { from: fx.edit.id, to: fx.edit.id })).toEqual({
      from: fx.edit.id,
      to: fx.edit.id,
      total: 0,
      offset: 0,
      changes: [],
    });
    // default `to`: the branch head
    expect((await ok<FileDiffResponse>(filediff(), { from: fx.edit.id })).to).toBe(fx.session.head.id);
  });

  it("?path= asks for one file's change; offset and limit page the list", async () => {
    const one = await ok<FileDiffResponse>(filediff(), { from: fx.baseline.id, to: fx.more.id, path: "src/main.ts" });
    expect({ total: one.total, paths: one.changes.map((c) => c.path) }).toEqual({ total: 1, paths: ["src/main.ts"] });
    expect((await ok<FileDiffResponse>(filediff(), { from: fx.baseline.id, to: fx.more.id, path: "bin/run.sh" })).changes).toEqual([]);
    const page = await ok<FileDiffResponse>(filediff(), { from: fx.baseline.id, to: fx.more.id, offset: 1, limit: 2 });
    expect({ total: page.total, offset: page.offset, paths: page.changes.map((c) => c.path) }).toEqual({
      total: 5,
      offset: 1,
      paths: ["assets/logo.png", "docs/a file é.md"],
    });
  });

  it("is bounded: a side over the per-file bound is too-large, past the response's budget files are omitted and ?path= has them", async () => {
    const s = Session.create(fx.store, { title: "large files" });
    const lines = 83_333;
    const size = 12 * lines;
    const text = (last: string) =>
      Array.from({ length: lines }, (_, i) => (i === lines - 1 ? last : `a${String(i).padStart(10, "0")}\n`)).join("");
    const names = Array.from({ length: 6 }, (_, i) => `m${i}.txt`);
    const before = text("a-last-line\n");
    const after = text("tail-line-2\n");
    expect(byteLength(before)).toBe(size);
    const from = commitFiles(
      s,
      [...names.map((p) => ({ path: p, bytes: before })), { path: "huge.txt", bytes: `${"h".repeat(DIFF_FILE_MAX)}\n` }],
      "workspace.baseline",
    );
    const to = commitFiles(s, [...names.map((p) => ({ path: p, bytes: after })), { path: "huge.txt", bytes: "small now\n" }], "call.end");
    const path = pathOf("filediff", { session: s.id });
    const d = await ok<FileDiffResponse>(path, { from: from.id, to: to.id });
    const kinds = d.changes.map((c) => c.delta.kind);
    const fit = Math.floor(DIFF_BUDGET / (2 * size));
    expect(kinds).toEqual(["too-large", ...Array(fit).fill("text"), ...Array(names.length - fit).fill("omitted")]);
    expect(d.changes[0]?.delta).toEqual({ kind: "too-large", limit: DIFF_FILE_MAX });
    const last = names[names.length - 1] as string;
    const alone = await ok<FileDiffResponse>(path, { from: from.id, to: to.id, path: last });
    expect(alone.changes[0]?.delta).toMatchObject({ kind: "text", added: 1, removed: 1, coarse: false });
  }, 60_000);

  it("IN-6 errors: 400 no from, bad ids, bad counts, a path that is not one; 404 unknown session, event, branch", async () => {
    const s = fx.session.id;
    expect(await fails(filediff())).toEqual({ status: 400, message: "an event id is required (?at=EVENT)" });
    expect(await fails(filediff(), { from: "x" })).toEqual({ status: 400, message: '"x" is not an event id' });
    expect(await fails(filediff(), { from: fx.baseline.id, to: 999999 })).toEqual({
      status: 404,
      message: `event 999999 is not an event of session ${s}`,
    });
    expect(await fails(filediff(), { from: fx.baseline.id, branch: "nope" })).toEqual({
      status: 404,
      message: `session ${s} has no branch "nope"`,
    });
    expect(await fails(pathOf("filediff", { session: "NOPE" }), { from: 1 })).toEqual({ status: 404, message: "no session NOPE" });
    expect(await fails(filediff(), { from: fx.baseline.id, limit: 1001 })).toEqual({
      status: 400,
      message: '?limit="1001" is not a count from 1 to 1000',
    });
    expect((await fails(filediff(), { from: fx.baseline.id, path: "a//b" })).status).toBe(400);
    // an event of another session is not one of this session's
    const other = Session.create(fx.store, { title: "other" });
    expect((await fails(filediff(), { from: other.head.id })).status).toBe(404);
  });
});

describe("IN-22 … IN-24 a workspace the tracker recorded from a real directory", () => {
  it("lists what the disk held, serves its bytes, and diffs two captures with patches that reproduce the disk", async () => {
    const root = mkdtempSync(join(tmpdir(), "strata-inspector-disk-"));
    try {
      mkdirSync(join(root, "src"));
      writeFileSync(join(root, "src/app.ts"), "const a = 1;\nconst b = 2;\nexport { a, b };\n");
      writeFileSync(join(root, "run.sh"), "#!/bin/sh\nexit 0\n");
      chmodSync(join(root, "run.sh"), 0o755);
      writeFileSync(join(root, "data.bin"), Uint8Array.from([0, 1, 2, 255]));
      writeFileSync(join(root, "gone.txt"), "to be deleted\n");
      symlinkSync("src/app.ts", join(root, "app-link"));
      const s = Session.create(fx.store, { title: "tracked from disk" });
      const tracker = new WorkspaceTracker(root, fx.store);
      const base = await tracker.baseline(s.tree);
      const e1 = s.commit((d) => applyFileChanges(d, base.changes), { label: "workspace.baseline" });
      writeFileSync(join(root, "src/app.ts"), "const a = 1;\nconst b = 3;\nexport { a, b };\n");
      rmSync(join(root, "gone.txt"));
      writeFileSync(join(root, "src/new.ts"), "export const n = 0;\n");
      const later = await tracker.capture(s.tree);
      const e2 = s.commit((d) => applyFileChanges(d, later.changes), { label: "call.end" });
      const path = (e: "files" | "file" | "filediff") => pathOf(e, { session: s.id });

      const listed = await ok<FilesResponse>(path("files"), { at: e1.id });
      expect(listed.files.map((f) => [f.path, f.mode])).toEqual([
        ["app-link", "link"],
        ["data.bin", "644"],
        ["gone.txt", "644"],
        ["run.sh", "755"],
        ["src/app.ts", "644"],
      ]);
      expect(listed.files.find((f) => f.path === "run.sh")?.hash).toBe(sha256("#!/bin/sh\nexit 0\n"));
      expect((await ok<FileResponse>(path("file"), { path: "src/app.ts" })).content).toEqual({
        kind: "text",
        text: readFileSync(join(root, "src/app.ts"), "utf8"),
      });
      expect((await ok<FileResponse>(path("file"), { path: "data.bin" })).content).toEqual({ kind: "binary" });
      expect((await ok<FileResponse>(path("file"), { path: "app-link" })).content).toEqual({ kind: "link", target: "src/app.ts" });

      const d = await ok<FileDiffResponse>(path("filediff"), { from: e1.id, to: e2.id });
      expect(d.changes.map((c) => `${c.change} ${c.path}`)).toEqual(["deleted gone.txt", "modified src/app.ts", "added src/new.ts"]);
      const before: Record<string, string | undefined> = {
        "gone.txt": "to be deleted\n",
        "src/app.ts": "const a = 1;\nconst b = 2;\nexport { a, b };\n",
      };
      for (const c of d.changes) {
        if (c.delta.kind !== "text") throw new Error(`${c.path}: ${c.delta.kind}`);
        const onDisk = c.change === "deleted" ? undefined : readFileSync(join(root, c.path), "utf8");
        expect({ path: c.path, after: patched(c.path, before[c.path], c.delta.unified) }).toEqual({ path: c.path, after: onDisk });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
