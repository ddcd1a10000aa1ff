/**
 * Kit for the branches property (workspace-branches.test.ts): file operations as the test plans
 * them (`Prim`, drawn by fast-check), resolved against a model of the directory into concrete
 * acts (`Act`), and each act three ways — the model's expected effect, a real file-system
 * operation, and a shell command (`run`) or built-in tool call (`write_file`, `edit_file`) for
 * the agent loop. A scripted model plays a run's calls, resolving each one only when the loop
 * asks for it, so calls settled earlier (a resume's reconcile included) are already in the model.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Tree } from "@strata/dom";
import fc from "fast-check";
import { type Model as AgentModel, type ModelEvent, type ModelRequest, workspaceFiles } from "../src/index.ts";
import { type FileModel, file, link, type Model } from "./workspace-kit.ts";

/** Directory and file names are disjoint, so no file path ever lies below another. */
export const PATHS: readonly string[] = ["", "src/", "src/lib/", "doc/"].flatMap((d) => ["a.txt", "b", "c.sh", "d.md"].map((n) => d + n));
/** Ignored (build output): written by commands, never recorded, never touched by a restore. */
export const LOGS: readonly string[] = ["build.log", "src/out.log"];
export const IGNORE_FILE = "*.log\n";
/** Link targets: files of the workspace, a name that does not exist, a file outside the workspace. */
export const LINK_TARGETS: readonly string[] = ["a.txt", "src/b", "nowhere", "../outside.txt"];

/** A file operation as drawn: indexes pick among the paths the model holds when it runs. */
export type Prim =
  | { readonly p: "write"; readonly path: number; readonly bytes: Uint8Array; readonly tool: boolean }
  | { readonly p: "edit"; readonly pick: number; readonly at: number; readonly len: number; readonly text: string }
  /** The same number of bytes, all different: right after a capture only the racy rule (WS-10) notices. */
  | { readonly p: "flip"; readonly pick: number }
  | { readonly p: "delete"; readonly pick: number }
  | { readonly p: "rename"; readonly pick: number; readonly to: number }
  | { readonly p: "chmod"; readonly pick: number }
  | { readonly p: "link"; readonly path: number; readonly target: number }
  | { readonly p: "log"; readonly path: number; readonly bytes: Uint8Array };

/** A resolved operation on concrete paths. */
export type Act =
  | { readonly a: "write"; readonly path: string; readonly bytes: Buffer; readonly overLink: boolean; readonly tool: boolean }
  | { readonly a: "edit"; readonly path: string; readonly old: string; readonly new: string; readonly next: Buffer }
  | { readonly a: "rm"; readonly path: string }
  | { readonly a: "mv"; readonly from: string; readonly to: string }
  | { readonly a: "chmod"; readonly path: string; readonly exec: boolean }
  | { readonly a: "ln"; readonly path: string; readonly target: string }
  | { readonly a: "log"; readonly path: string; readonly bytes: Buffer; readonly overLink: boolean };

/** A call of a run (or a capture of direct operations): its prims, and whether a run makes them one shell command. */
export interface CallPlan {
  readonly prims: readonly Prim[];
  readonly shell: boolean;
}

const text = fc.string({ unit: fc.constantFrom("a", "b", "x", "\n", " ", "é", "✓", "'", "%", "\\"), maxLength: 24 });
const bytes = fc.oneof(
  { weight: 2, arbitrary: text.map((s) => new Uint8Array(Buffer.from(s))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }) },
);
export const primArb: fc.Arbitrary<Prim> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ p: fc.constant("write" as const), path: fc.nat(), bytes, tool: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({ p: fc.constant("edit" as const), pick: fc.nat(), at: fc.nat(), len: fc.integer({ min: 1, max: 4 }), text }),
  },
  { weight: 1, arbitrary: fc.record({ p: fc.constant("flip" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ p: fc.constant("delete" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ p: fc.constant("rename" as const), pick: fc.nat(), to: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ p: fc.constant("chmod" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ p: fc.constant("link" as const), path: fc.nat(), target: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ p: fc.constant("log" as const), path: fc.nat(), bytes }) },
);
export const callArb: fc.Arbitrary<CallPlan> = fc.record({
  prims: fc.array(primArb, { minLength: 1, maxLength: 3 }),
  shell: fc.boolean(),
});

const at = <T>(xs: readonly T[], n: number): T => xs[n % xs.length] as T;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const isUtf8 = (b: Buffer): boolean => Buffer.from(b.toString("utf8")).equals(b);
/** Occurrences as edit_file counts them (non-overlapping, left to right). */
const occurrences = (s: string, sub: string): number => s.split(sub).length - 1;

/** Tracked paths of the model (the ignore file is the test's, never an operation's). */
function tracked(disk: Model, kind?: "file"): string[] {
  return [...disk.keys()].filter((p) => p !== ".gitignore" && (kind === undefined || disk.get(p)?.kind === "file")).sort();
}

/** `prim` against the directory holding `disk` (tracked) and `extras` (ignored), or undefined when it has nothing to act on. */
export function resolve(prim: Prim, disk: Model, extras: Model): Act | undefined {
  switch (prim.p) {
    case "write": {
      const path = at(PATHS, prim.path);
      return { a: "write", path, bytes: Buffer.from(prim.bytes), overLink: disk.get(path)?.kind === "link", tool: prim.tool };
    }
    case "edit": {
      // Text edit_file can edit: UTF-8, and no leading BOM (its decoder drops one: not this test's subject).
      const candidates = tracked(disk, "file").filter((p) => {
        const b = (disk.get(p) as FileModel).bytes;
        return b.length > 0 && isUtf8(b) && !b.subarray(0, 3).equals(BOM);
      });
      if (candidates.length === 0) return undefined;
      const path = at(candidates, prim.pick);
      const s = (disk.get(path) as FileModel).bytes.toString("utf8");
      // The shortest piece from `at` that occurs exactly once (the whole text always does).
      let start = prim.at % s.length;
      let end = Math.min(s.length, start + prim.len);
      while (occurrences(s, s.slice(start, end)) !== 1 && end < s.length) end++;
      if (occurrences(s, s.slice(start, end)) !== 1) [start, end] = [0, s.length];
      const old = s.slice(start, end);
      return { a: "edit", path, old, new: prim.text, next: Buffer.from(s.replace(old, () => prim.text)) };
    }
    case "flip": {
      const k = tracked(disk, "file").filter((p) => (disk.get(p) as FileModel).bytes.length > 0);
      if (k.length === 0) return undefined;
      const path = at(k, prim.pick);
      const flipped = Buffer.from((disk.get(path) as FileModel).bytes.map((b) => b ^ 0xff));
      return { a: "write", path, bytes: flipped, overLink: false, tool: true };
    }
    case "delete": {
      const k = tracked(disk);
      return k.length === 0 ? undefined : { a: "rm", path: at(k, prim.pick) };
    }
    case "rename": {
      // Ignored files move too: a tracked file renamed to a .log leaves the record, a .log renamed in joins it.
      const k = [...tracked(disk), ...[...extras.keys()].sort()];
      if (k.length === 0) return undefined;
      const from = at(k, prim.pick);
      const to = at([...PATHS, ...LOGS], prim.to);
      // No links among ignored files: a later `printf >` there would write through one.
      if (from === to || (LOGS.includes(to) && disk.get(from)?.kind === "link")) return undefined;
      return { a: "mv", from, to };
    }
    case "chmod": {
      const k = tracked(disk, "file");
      if (k.length === 0) return undefined;
      const path = at(k, prim.pick);
      return { a: "chmod", path, exec: !(disk.get(path) as FileModel).exec };
    }
    case "link":
      return { a: "ln", path: at(PATHS, prim.path), target: at(LINK_TARGETS, prim.target) };
    case "log": {
      const path = at(LOGS, prim.path);
      return { a: "log", path, bytes: Buffer.from(prim.bytes), overLink: extras.get(path)?.kind === "link" };
    }
    default:
      return prim satisfies never;
  }
}

/**
 * What `act` does to the directory, in the model: `disk` the files the workspace tracks, `extras`
 * the ignored ones. A write keeps a file's exec bit (write_file, `printf >` and writeFile all do);
 * a new file, or one replacing a link, is 644. False (and no change) when it fails: a move whose
 * source is gone — an ignored file, which a rewind does not bring back, when a resume runs a
 * call left pending (every tracked file is then as the call found it).
 */
export function applyAct(disk: Model, extras: Model, act: Act): boolean {
  switch (act.a) {
    case "write": {
      const was = disk.get(act.path);
      disk.set(act.path, file(act.bytes, was?.kind === "file" && was.exec));
      return true;
    }
    case "edit":
      disk.set(act.path, file(act.next, (disk.get(act.path) as FileModel).exec));
      return true;
    case "rm":
      disk.delete(act.path);
      return true;
    case "mv": {
      const e = disk.get(act.from) ?? extras.get(act.from);
      if (e === undefined) return false;
      for (const m of [disk, extras]) {
        m.delete(act.from);
        m.delete(act.to);
      }
      (LOGS.includes(act.to) ? extras : disk).set(act.to, e);
      return true;
    }
    case "chmod":
      disk.set(act.path, file((disk.get(act.path) as FileModel).bytes, act.exec));
      return true;
    case "ln":
      disk.set(act.path, link(act.target));
      return true;
    case "log": {
      const was = extras.get(act.path);
      extras.set(act.path, file(act.bytes, was?.kind === "file" && was.exec));
      return true;
    }
    default:
      return act satisfies never;
  }
}

/** Applies a call's acts in order as `&&` does: up to the first that fails. True when all succeeded. */
export function applyActs(disk: Model, extras: Model, acts: readonly Act[]): boolean {
  for (const a of acts) if (!applyAct(disk, extras, a)) return false;
  return true;
}

/** Performs `act` in `dir` with the file system calls a program would use. */
export function applyDirect(dir: string, act: Act): void {
  const abs = (p: string): string => join(dir, p);
  const parent = (p: string): void => void mkdirSync(dirname(abs(p)), { recursive: true });
  switch (act.a) {
    case "write":
      parent(act.path);
      if (act.overLink) rmSync(abs(act.path));
      writeFileSync(abs(act.path), act.bytes);
      return;
    case "edit":
      writeFileSync(abs(act.path), act.next);
      return;
    case "rm":
      rmSync(abs(act.path));
      return;
    case "mv":
      parent(act.to);
      renameSync(abs(act.from), abs(act.to));
      return;
    case "chmod":
      chmodSync(abs(act.path), act.exec ? 0o755 : 0o644);
      return;
    case "ln":
      parent(act.path);
      rmSync(abs(act.path), { force: true });
      symlinkSync(act.target, abs(act.path));
      return;
    case "log":
      parent(act.path);
      if (act.overLink) rmSync(abs(act.path));
      writeFileSync(abs(act.path), act.bytes);
      return;
    default:
      act satisfies never;
  }
}

const q = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
/** `printf` format printing exactly `b` (every byte as an octal escape: no `%`, no quoting issue). */
const printf = (b: Buffer): string => `printf '${[...b].map((x) => `\\${x.toString(8).padStart(3, "0")}`).join("")}'`;
const mkdirFor = (p: string): string[] => (p.includes("/") ? [`mkdir -p ${q(dirname(p))}`] : []);

/** `act` as a POSIX shell command (run with `sh -c` by the `run` tool). */
export function shellOf(act: Act): string {
  switch (act.a) {
    case "write":
      return [...mkdirFor(act.path), ...(act.overLink ? [`rm -f ${q(act.path)}`] : []), `${printf(act.bytes)} > ${q(act.path)}`].join(
        " && ",
      );
    case "edit":
      // the shell's edit: the new content over the file (its mode stays)
      return `${printf(act.next)} > ${q(act.path)}`;
    case "rm":
      return `rm -f ${q(act.path)}`;
    case "mv":
      return [...mkdirFor(act.to), `mv -f ${q(act.from)} ${q(act.to)}`].join(" && ");
    case "chmod":
      return `chmod ${act.exec ? "+x" : "-x"} ${q(act.path)}`;
    case "ln":
      return [...mkdirFor(act.path), `rm -f ${q(act.path)}`, `ln -s ${q(act.target)} ${q(act.path)}`].join(" && ");
    case "log":
      return [...mkdirFor(act.path), ...(act.overLink ? [`rm -f ${q(act.path)}`] : []), `${printf(act.bytes)} > ${q(act.path)}`].join(
        " && ",
      );
    default:
      return act satisfies never;
  }
}

/** A tool call of the scripted model. */
export interface ScriptCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** The call for `acts`: write_file or edit_file for a single act that has one, else one `run` of all of them. */
export function callOf(id: string, acts: readonly Act[], shell: boolean): ScriptCall {
  const [only] = acts;
  if (!shell && acts.length === 1 && only !== undefined) {
    if (only.a === "write" && only.tool && !only.overLink && isUtf8(only.bytes))
      return { id, name: "write_file", args: { path: only.path, content: only.bytes.toString("utf8") } };
    if (only.a === "edit") return { id, name: "edit_file", args: { path: only.path, old: only.old, new: only.new } };
  }
  return { id, name: "run", args: { command: acts.length === 0 ? "true" : acts.map(shellOf).join(" && ") } };
}

/**
 * A model that plays one run: for a request with N assistant messages since the last user message
 * it asks `next(N)` for the call to make, and says "done" when there is none. Calls are made on
 * demand, so each is resolved against the files as they are when the loop asks.
 */
export class PlanModel implements AgentModel {
  readonly id = "scripted:branches";
  constructor(private readonly next: (n: number) => ScriptCall | undefined) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    let n = 0;
    for (const m of request.messages) n = m.role === "user" ? 0 : m.role === "assistant" ? n + 1 : n;
    const call = this.next(n);
    if (call === undefined) {
      yield { type: "text", delta: "done" };
      yield { type: "done", finishReason: "stop" };
      return;
    }
    yield { type: "tool-call", index: 0, id: call.id, name: call.name };
    yield { type: "tool-arguments", index: 0, delta: JSON.stringify(call.args) };
    yield { type: "done", finishReason: "tool_calls" };
  }
}

const sha = (b: Buffer | string): string => createHash("sha256").update(b).digest("hex");

/** The record a tree should hold for `model`: one line per file (path, mode, size, sha256), sorted. */
export function expectedRecord(model: Model): string[] {
  return [...model.entries()]
    .map(([p, e]) =>
      e.kind === "link"
        ? `${p} link ${Buffer.byteLength(e.target)} ${sha(e.target)}`
        : `${p} ${e.exec ? "755" : "644"} ${e.bytes.length} ${sha(e.bytes)}`,
    )
    .sort();
}

/** The record `tree` holds, in the same form. */
export function recordOf(tree: Tree): string[] {
  return [...workspaceFiles(tree).values()].map((e) => `${e.path} ${e.mode} ${e.size} ${e.hash}`).sort();
}

/** The paths where two models differ (added, removed or changed), sorted. */
export function differing(a: Model, b: Model): string[] {
  const ra = new Map(expectedRecord(a).map((l) => [l.split(" ")[0] as string, l]));
  const rb = new Map(expectedRecord(b).map((l) => [l.split(" ")[0] as string, l]));
  return [...new Set([...ra.keys(), ...rb.keys()])].filter((p) => ra.get(p) !== rb.get(p)).sort();
}
