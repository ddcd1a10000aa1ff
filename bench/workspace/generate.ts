/**
 * A deterministic workspace shaped like a real source tree, for the workspace benchmarks
 * (issue 13): `files` tracked files (10,000 by default, ~200 MB), in directories 1–5 levels below
 * the root (paths of 2–6 segments), sizes log-normal-ish — mostly 1–30 KB of code-like text, about
 * 2% media files of 10–300 KB and a few MB-sized binaries (incompressible bytes) that bring the
 * total to ~20 KB per file — a `.gitignore`, about 2% executable scripts, and ignored content
 * (`node_modules/`, `dist/`, a log file) that neither git nor strata may track.
 *
 * The same seed and size give the same bytes, paths and modes on every run. The returned
 * {@link WorkspaceModel} is what the mutations of a benchmarked tool call pick their targets from.
 *
 * Size knobs (benchmarks are spawned without arguments, so the knobs are environment variables;
 * `--small` is honoured when a file is run by hand): `BENCH_WS_SMALL=1` or `--small` → 1,000 files;
 * `BENCH_WS_FILES=N` → N files. The figures in docs/benchmarks.md use the full size.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pick, rng } from "../lib/stats.ts";

/** What the generator (and later the mutations) know about one tracked file. */
export interface ModelFile {
  size: number;
  exec: boolean;
  readonly kind: "text" | "media" | "big";
}

export interface WorkspaceModel {
  readonly root: string;
  /** Tracked files by POSIX path relative to the root. */
  readonly files: Map<string, ModelFile>;
  /** Directories holding tracked files (relative, no trailing slash). */
  readonly dirs: readonly string[];
  /** Ignored files written by the generator (relative paths). */
  readonly ignored: readonly string[];
}

/** The number of tracked files the benchmarks use: 10,000, or the dev knobs. */
export function workspaceFiles(): number {
  if (process.env.BENCH_WS_FILES !== undefined && process.env.BENCH_WS_FILES !== "") {
    const n = Number(process.env.BENCH_WS_FILES);
    if (!Number.isInteger(n) || n < 50) throw new Error(`BENCH_WS_FILES must be an integer ≥ 50, got ${process.env.BENCH_WS_FILES}`);
    return n;
  }
  if (process.env.BENCH_WS_SMALL === "1" || process.argv.includes("--small")) return 1000;
  return 10_000;
}

/** Bytes per tracked file on average (the MB-sized binaries fill the tree up to this). */
export const BYTES_PER_FILE = 20_000;

const TOP = ["src", "lib", "test", "docs", "packages", "assets", "scripts", "tools", "examples", "vendor"] as const;
const DIR_WORDS = [
  "core",
  "util",
  "api",
  "model",
  "view",
  "store",
  "net",
  "parse",
  "render",
  "cli",
  "server",
  "client",
  "types",
  "fixtures",
  "internal",
  "plugins",
  "i18n",
  "config",
] as const;
const TEXT_EXT = [".ts", ".ts", ".ts", ".tsx", ".js", ".json", ".md", ".css", ".py", ".go", ".rs", ".yaml", ".txt"] as const;
const MEDIA_EXT = [".png", ".jpg", ".woff2", ".ico", ".gif"] as const;
const BIG_EXT = [".wasm", ".bin", ".zip", ".pdf", ".sqlite"] as const;
const WORDS = [
  "const",
  "let",
  "return",
  "function",
  "export",
  "import",
  "from",
  "if",
  "else",
  "for",
  "await",
  "async",
  "new",
  "this",
  "value",
  "node",
  "tree",
  "index",
  "result",
  "error",
  "path",
  "options",
  "=",
  "=>",
  "{",
  "}",
  "(",
  ")",
  ";",
  "+",
  "0",
  "1",
  "null",
  "undefined",
  "string",
  "number",
  "true",
  "false",
] as const;

/** A pool of code-like lines; file contents are drawn from it (zlib compresses them like source). */
export class LinePool {
  readonly lines: string[] = [];
  constructor(seed: number, count = 8192) {
    const r = rng(seed);
    for (let i = 0; i < count; i++) {
      const indent = "  ".repeat(Math.floor(r() * 4));
      const words = 2 + Math.floor(r() * 12);
      const parts: string[] = [];
      for (let w = 0; w < words; w++) parts.push(r() < 0.15 ? `${pick(r, WORDS)}${Math.floor(r() * 1000)}` : pick(r, WORDS));
      this.lines.push(r() < 0.08 ? `${indent}// ${parts.join(" ")}` : `${indent}${parts.join(" ")}`);
    }
  }

  /** About `size` bytes of lines (exactly `size`, ending in a newline). */
  text(r: () => number, size: number): string {
    const out: string[] = [];
    let n = 0;
    while (n < size) {
      const line = pick(r, this.lines);
      out.push(line);
      n += line.length + 1;
    }
    const s = `${out.join("\n")}\n`;
    return s.length <= size ? s : `${s.slice(0, Math.max(0, size - 1))}\n`;
  }
}

/** `size` incompressible bytes from a seeded xorshift generator (fast enough for 100 MB). */
export function randomBytes(seed: number, size: number): Buffer {
  const words = new Uint32Array(Math.ceil(size / 4));
  let x = seed >>> 0 || 0x9e3779b9;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return Buffer.from(words.buffer, 0, size);
}

/** Log-normal size with the given median and sigma, clamped. */
export function logNormal(r: () => number, median: number, sigma: number, lo: number, hi: number): number {
  // Box–Muller on the seeded PRNG.
  const z = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  return Math.round(Math.min(hi, Math.max(lo, median * Math.exp(sigma * z))));
}

function makeDirs(r: () => number, count: number): string[] {
  const dirs: { path: string; depth: number }[] = TOP.map((t) => ({ path: t, depth: 1 }));
  const seen = new Set(dirs.map((d) => d.path));
  while (dirs.length < count) {
    const parent = pick(r, dirs);
    // Real trees thin out with depth: most files sit 2–4 levels down, few at 6.
    if (parent.depth >= 5 || (parent.depth >= 3 && r() < 0.6) || (parent.depth >= 4 && r() < 0.6)) continue;
    let name: string = pick(r, DIR_WORDS);
    if (seen.has(`${parent.path}/${name}`)) name = `${name}${dirs.length}`;
    const path = `${parent.path}/${name}`;
    seen.add(path);
    dirs.push({ path, depth: parent.depth + 1 });
  }
  return dirs.map((d) => d.path);
}

export const GITIGNORE = "node_modules/\ndist/\n*.log\n";

/** Picks a new, unused text file path in one of the model's directories. */
export function newTextPath(r: () => number, model: WorkspaceModel, tag: string): string {
  for (;;) {
    const path = `${pick(r, model.dirs)}/${tag}${pick(r, TEXT_EXT)}`;
    if (!model.files.has(path)) return path;
    tag = `${tag}x`;
  }
}

/**
 * Writes the workspace under `root` (which must not exist yet or be empty) and returns its model.
 * Directory and file mtimes are whatever the writes give them.
 */
export function generateWorkspace(root: string, options: { files?: number; seed?: number } = {}): WorkspaceModel {
  const count = options.files ?? workspaceFiles();
  const seed = options.seed ?? 13;
  const r = rng(seed);
  const pool = new LinePool(seed + 1);
  const dirs = makeDirs(r, Math.max(TOP.length, Math.round(count / 12)));
  const files = new Map<string, ModelFile>();
  const ignored: string[] = [];
  mkdirSync(root, { recursive: true });
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, ".gitignore"), GITIGNORE);
  files.set(".gitignore", { size: GITIGNORE.length, exec: false, kind: "text" });

  const write = (path: string, data: string | Buffer, exec: boolean, kind: ModelFile["kind"]): void => {
    const abs = join(root, path);
    writeFileSync(abs, data);
    if (exec) chmodSync(abs, 0o755);
    files.set(path, { size: data.length, exec, kind });
  };

  // Text and media: all but the MB-sized binaries.
  let total = GITIGNORE.length;
  const nBigGuess = Math.max(1, Math.round(count / 700));
  const regular = count - 1 - nBigGuess;
  for (let i = 0; i < regular; i++) {
    const dir = pick(r, dirs);
    if (r() < 0.02) {
      const size = logNormal(r, 50_000, 0.9, 10_000, 300_000);
      write(`${dir}/img${i}${pick(r, MEDIA_EXT)}`, randomBytes(seed * 1_000_003 + i, size), false, "media");
      total += size;
      continue;
    }
    const size = logNormal(r, 5_000, 1.0, 120, 200_000);
    const script = dir.startsWith("scripts") || dir.startsWith("tools") ? r() < 0.3 : r() < 0.005;
    const path = script ? `${dir}/run${i}.sh` : `${dir}/mod${i}${pick(r, TEXT_EXT)}`;
    const text = script ? `#!/bin/sh\n${pool.text(r, Math.max(0, size - 10))}` : pool.text(r, size);
    write(path, text, script, "text");
    total += text.length;
  }
  // MB-sized binaries fill up to BYTES_PER_FILE × count.
  const target = BYTES_PER_FILE * count;
  for (let b = 0; b < nBigGuess; b++) {
    const left = target - total;
    const share = Math.max(256_000, Math.round(left / (nBigGuess - b)));
    const size = Math.min(12_000_000, Math.max(256_000, Math.round(share * (0.6 + 0.8 * r()))));
    const path = `${pick(r, dirs)}/blob${b}${pick(r, BIG_EXT)}`;
    write(path, randomBytes(seed * 7_919 + b, size), false, "big");
    total += size;
  }

  // Ignored content: dependencies, build output and a log, none of it tracked.
  const ign = (path: string, data: string): void => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), data);
    ignored.push(path);
  };
  for (let i = 0; i < Math.round(count / 20); i++)
    ign(`node_modules/pkg${i % 40}/lib/f${i}.js`, pool.text(r, logNormal(r, 3_000, 0.8, 100, 50_000)));
  for (let i = 0; i < Math.round(count / 100); i++) ign(`dist/out${i}.js`, pool.text(r, logNormal(r, 8_000, 0.8, 100, 80_000)));
  ign("build.log", pool.text(r, 4_000));
  return { root, files, dirs, ignored };
}

/** Total bytes of the model's tracked files. */
export function modelBytes(model: WorkspaceModel): number {
  let n = 0;
  for (const f of model.files.values()) n += f.size;
  return n;
}
