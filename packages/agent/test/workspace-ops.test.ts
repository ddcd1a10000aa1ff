/**
 * TL-20: the built-in tools act on a workspace only through `WorkspaceOps`. Operations passed to
 * `workspaceTools` (or to one tool's factory) receive every read, write, listing and command — a
 * recording wrapper here, as the workspace-effects work will be — and the default, `localWorkspace`,
 * confines `stat` and `remove` like everything else.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Action,
  createReadFileTool,
  createWriteFileTool,
  localWorkspace,
  RegistryExecutor,
  ToolRegistry,
  WorkspaceError,
  type WorkspaceOps,
  workspaceTools,
} from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

/** Delegates to `inner`, noting each operation and its path (or command). */
function recording(inner: WorkspaceOps): { ops: WorkspaceOps; log: string[] } {
  const log: string[] = [];
  const note = <T>(what: string, result: T): T => {
    log.push(what);
    return result;
  };
  const ops: WorkspaceOps = {
    read: (path, max) => note(`read ${path}`, inner.read(path, max)),
    write: (path, content) => note(`write ${path}`, inner.write(path, content)),
    list: (path, bounds) => note(`list ${path}`, inner.list(path, bounds)),
    stat: (path) => note(`stat ${path}`, inner.stat(path)),
    remove: (path) => note(`remove ${path}`, inner.remove(path)),
    exec: (command, options) => note(`exec ${command}`, inner.exec(command, options)),
  };
  return { ops, log };
}

const call = (name: string, args: unknown): Action => ({ kind: "tool-call", call: { name, arguments: JSON.stringify(args) } });

describe("TL-20 injectable workspace operations", () => {
  it("every built-in tool reads, writes, lists and runs through the operations given; the results are the default tools'", async () => {
    const signal = new AbortController().signal;
    const actions = [
      call("read_file", { path: "a.txt" }),
      call("list_dir", {}),
      call("write_file", { path: "sub/b.txt", content: "beta" }),
      call("edit_file", { path: "sub/b.txt", old: "beta", new: "gamma" }),
      call("run", { command: "cat sub/b.txt" }),
    ];
    const observe = async (executor: RegistryExecutor): Promise<string[]> => {
      const out: string[] = [];
      for (const a of actions) out.push((await executor.execute(a, signal)).observation);
      return out;
    };
    const workspace = (): string => {
      const root = tempDir("strata-ops-");
      writeFileSync(join(root, "a.txt"), "alpha\n");
      return root;
    };
    const root = workspace();
    const { ops, log } = recording(localWorkspace(root));
    // `root` names nothing: with operations given, the tools use them alone.
    const injected = await observe(
      new RegistryExecutor(new ToolRegistry(workspaceTools({ root: join(root, "not-there"), operations: ops }))),
    );
    expect(injected).toEqual([
      "alpha\n",
      "a.txt",
      "wrote 4 bytes to sub/b.txt",
      "replaced 1 occurrence in sub/b.txt",
      "exit code 0\ngamma",
    ]);
    expect(log).toEqual(["read a.txt", "list .", "write sub/b.txt", "read sub/b.txt", "write sub/b.txt", "exec cat sub/b.txt"]);
    expect(readFileSync(join(root, "sub/b.txt"), "utf8")).toBe("gamma");
    // The default tools of an identical directory observe the same.
    expect(await observe(new RegistryExecutor(new ToolRegistry(workspaceTools({ root: workspace() }))))).toEqual(injected);
  });

  it("a tool's factory takes a directory (the local, confined workspace there) or operations", async () => {
    const root = tempDir("strata-ops-");
    const signal = new AbortController().signal;
    const write = createWriteFileTool(root);
    expect(await write.handler?.({ path: "x.txt", content: "x" }, { signal })).toBe("wrote 1 bytes to x.txt");
    await expect(write.handler?.({ path: "../escape.txt", content: "x" }, { signal })).rejects.toThrow(WorkspaceError);
    const { ops, log } = recording(localWorkspace(root));
    expect(await createReadFileTool(ops, { maxReadBytes: 1 }).handler?.({ path: "x.txt" }, { signal })).toBe("x");
    expect(log).toEqual(["read x.txt"]);
  });

  it("localWorkspace: stat and remove are confined; remove refuses directories and ignores what is not there", async () => {
    const root = tempDir("strata-ops-");
    const outside = tempDir("strata-outside-");
    writeFileSync(join(root, "f.txt"), "12345");
    mkdirSync(join(root, "d"));
    writeFileSync(join(outside, "secret.txt"), "s");
    symlinkSync(join(outside, "secret.txt"), join(root, "out"));
    const ws = localWorkspace(root);
    expect(await ws.stat("f.txt")).toEqual({ kind: "file", size: 5 });
    expect(await ws.stat("d")).toEqual({ kind: "directory", size: 0 });
    expect(await ws.stat("missing.txt")).toBeUndefined();
    await expect(ws.stat("../x")).rejects.toThrow(/outside the workspace/);
    await expect(ws.stat("out")).rejects.toThrow(/leads outside the workspace through a symbolic link/);
    await expect(ws.remove("d")).rejects.toThrow(new WorkspaceError("d is a directory"));
    await expect(ws.remove("out")).rejects.toThrow(WorkspaceError);
    await ws.remove("missing.txt");
    await ws.remove("f.txt");
    expect(existsSync(join(root, "f.txt"))).toBe(false);
    expect(existsSync(join(outside, "secret.txt"))).toBe(true);
  });
});
