/**
 * What one benchmarked tool call does to the workspace: 1–10 tracked files changed the ways agent
 * tools and shell commands change them — edits of a few lines in text files (most), appends, new
 * files, deletions, renames (a delete and an add), an exec-bit flip, a rewritten media file — and
 * now and then a write to ignored build output that nothing may report. Deterministic for a given
 * PRNG; every call touches distinct paths, so the expected file changes are known exactly and a
 * capture can be checked against them.
 *
 * The MB-sized binaries are never rewritten: an agent's calls edit sources, and one rewrite of a
 * 10 MB file would drown the per-call byte figures of 999 other calls.
 */
import { appendFileSync, chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pick } from "../lib/stats.ts";
import { type LinePool, logNormal, type ModelFile, newTextPath, randomBytes, type WorkspaceModel } from "./generate.ts";

export interface CallEffect {
  /** Tracked paths whose state changed (a rename counts its two paths), sorted. */
  readonly paths: string[];
  /** Bytes of the new content of every added or modified file (what a content store must keep). */
  readonly changedBytes: number;
  /** The kinds of change made, for the record. */
  readonly kinds: Record<string, number>;
}

type Kind = "edit" | "append" | "add" | "delete" | "rename" | "chmod" | "media";
const WEIGHTS: readonly [Kind, number][] = [
  ["edit", 60],
  ["append", 10],
  ["add", 10],
  ["delete", 7],
  ["rename", 6],
  ["chmod", 4],
  ["media", 3],
];

function chooseKind(r: () => number): Kind {
  let x = r() * 100;
  for (const [k, w] of WEIGHTS) {
    x -= w;
    if (x < 0) return k;
  }
  return "edit";
}

/**
 * Changes 1–10 tracked files of `model` on disk (and in the model). `call` is the call's number,
 * written into edits so that no edit can leave a file's bytes as they were.
 */
export function mutateCall(model: WorkspaceModel, pool: LinePool, r: () => number, call: number): CallEffect {
  const want = 1 + Math.floor(r() * 10);
  const touched = new Set<string>();
  const kinds: Record<string, number> = {};
  let changedBytes = 0;
  const paths = [...model.files.keys()];
  const pickFile = (ok: (path: string) => boolean): string | undefined => {
    for (let tries = 0; tries < 50; tries++) {
      const p = pick(r, paths);
      if (model.files.has(p) && !touched.has(p) && p !== ".gitignore" && ok(p)) return p;
    }
    return undefined;
  };
  const isText = (p: string) => model.files.get(p)?.kind === "text";
  let serial = 0;
  while (touched.size < want) {
    const kind = chooseKind(r);
    const tag = `c${call}_${serial++}`;
    const abs = (p: string) => join(model.root, p);
    switch (kind) {
      case "edit": {
        const p = pickFile(isText);
        if (p === undefined) continue;
        const lines = readFileSync(abs(p), "utf8").split("\n");
        const at = Math.floor(r() * lines.length);
        const cut = Math.floor(r() * 6);
        const add = [
          `// ${tag} edited`,
          ...pool
            .text(r, logNormal(r, 200, 1, 10, 3_000))
            .split("\n")
            .slice(0, -1),
        ];
        lines.splice(at, Math.min(cut, lines.length - at), ...add);
        const text = lines.join("\n");
        writeFileSync(abs(p), text);
        (model.files.get(p) as { size: number }).size = text.length;
        changedBytes += text.length;
        touched.add(p);
        break;
      }
      case "append": {
        const p = pickFile(isText);
        if (p === undefined) continue;
        const more = `// ${tag} appended\n${pool.text(r, logNormal(r, 400, 1, 20, 5_000))}`;
        appendFileSync(abs(p), more);
        const f = model.files.get(p) as { size: number };
        f.size += more.length;
        changedBytes += f.size;
        touched.add(p);
        break;
      }
      case "add": {
        const p = newTextPath(r, model, `new_${tag}`);
        const text = `// ${tag}\n${pool.text(r, logNormal(r, 5_000, 1, 120, 100_000))}`;
        writeFileSync(abs(p), text);
        model.files.set(p, { size: text.length, exec: false, kind: "text" });
        paths.push(p);
        changedBytes += text.length;
        touched.add(p);
        break;
      }
      case "delete": {
        const p = pickFile((q) => model.files.get(q)?.kind !== "big");
        if (p === undefined) continue;
        rmSync(abs(p));
        model.files.delete(p);
        touched.add(p);
        break;
      }
      case "rename": {
        if (want - touched.size < 2) continue;
        const p = pickFile(isText);
        if (p === undefined) continue;
        const q = newTextPath(r, model, `moved_${tag}`);
        renameSync(abs(p), abs(q));
        const f = model.files.get(p) as ModelFile;
        model.files.delete(p);
        model.files.set(q, f);
        paths.push(q);
        changedBytes += f.size;
        touched.add(p);
        touched.add(q);
        break;
      }
      case "chmod": {
        const p = pickFile(isText);
        if (p === undefined) continue;
        const f = model.files.get(p) as { exec: boolean };
        f.exec = !f.exec;
        chmodSync(abs(p), f.exec ? 0o755 : 0o644);
        touched.add(p);
        break;
      }
      case "media": {
        const p = pickFile((q) => model.files.get(q)?.kind === "media");
        if (p === undefined) continue;
        const size = logNormal(r, 50_000, 0.9, 10_000, 300_000);
        writeFileSync(abs(p), randomBytes(call * 7_777 + serial, size));
        (model.files.get(p) as { size: number }).size = size;
        changedBytes += size;
        touched.add(p);
        break;
      }
      default: {
        const never: never = kind;
        throw new Error(`unknown mutation ${String(never)}`);
      }
    }
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  // A build step now and then: ignored output changes, which no capture may report.
  if (r() < 0.1 && model.ignored.length > 0) {
    const p = pick(r, model.ignored);
    writeFileSync(join(model.root, p), pool.text(r, 2_000));
    kinds.ignored = (kinds.ignored ?? 0) + 1;
  }
  return { paths: [...touched].sort(), changedBytes, kinds };
}
