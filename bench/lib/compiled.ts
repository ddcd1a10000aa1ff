/**
 * Bench scripts as the plain JavaScript a harness author runs. A probe run through tsx carries the
 * TypeScript loader in its process: a second V8 isolate off the main thread that adds ~40 MB of RSS
 * to every process (a script that only prints its `maxRSS`: 42 MB under `node`, 82 MB under
 * `node --import tsx`) and would count as the library's memory. `compileScript` bundles a script and
 * the strata sources it imports (the `@strata/source` condition: the code being measured, not a
 * stale dist/) into one ES module with rolldown — as the CLI is built (scripts/build.mjs) — leaving
 * npm dependencies (better-sqlite3, pg, …) and Node's modules as imports, so `node <out>` runs it.
 */
import { mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Compiles `entry` (a path under bench/) into `<its directory>/.build/<name>.mjs` and returns that
 * path. The output sits beside the script, so its imports resolve from bench/'s node_modules.
 */
export async function compileScript(entry: string): Promise<string> {
  const { rolldown } = await import("rolldown");
  const out = join(dirname(entry), ".build");
  mkdirSync(out, { recursive: true });
  const name = basename(entry).replace(/\.ts$/, "");
  const bundle = await rolldown({
    cwd: ROOT,
    input: { [name]: entry },
    platform: "node",
    resolve: { conditionNames: ["@strata/source", "import", "node", "default"] },
    external: (id) => /^(node:|[^./@]|@(?!strata\/))/.test(id) || /^@strata\/[^/]+\/package\.json$/.test(id),
    treeshake: true,
    logLevel: "warn",
  });
  try {
    await bundle.write({ dir: out, format: "esm", entryFileNames: "[name].mjs", chunkFileNames: `${name}-[hash].mjs`, sourcemap: false });
  } finally {
    await bundle.close();
  }
  return join(out, `${name}.mjs`);
}
