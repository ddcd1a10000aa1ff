#!/usr/bin/env node
/**
 * Builds every package for publishing (plain Node, no tsx): ES modules with .d.ts, declaration maps
 * and source maps in each package's dist/, in dependency order (a package is compiled against the
 * built types of the ones it uses, exactly as a consumer sees them).
 *
 * - The libraries (dom, store, engine, agent, models, inspector): `tsc -p tsconfig.build.json`,
 *   one module per source file. The inspector's page is built by Vite into app/.
 * - The command (`@strata/cli`): one rolldown bundle of its sources and the strata packages it uses,
 *   split so that each command's code loads only when that command runs (start-up: ISSUE 16), plus
 *   its .d.ts from tsc and its own copy of the offline demo (dist/demo/).
 *
 * Each dist/ is written next to the old one and swapped in whole, and ends with dist/build.json
 * (the newest source it was built from), which `strata` reads to tell a current build from a stale one.
 *
 * Usage: node scripts/build.mjs [--check] [--quiet]
 *   --check   build nothing; exit 1 listing every package whose dist/ is missing or older than its sources
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { newestInput, PACKAGES, stale } from "./build-inputs.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = new Set(process.argv.slice(2));
const quiet = args.has("--quiet");
const say = (line) => {
  if (!quiet) process.stderr.write(`${line}\n`);
};

if (args.has("--check")) {
  const bad = PACKAGES.map((p) => [p, stale(p)]).filter(([, why]) => why !== undefined);
  for (const [p, why] of bad) console.log(`${p.name}: dist/ is ${why}; run \`npx -y pnpm@12.4.2 build\``);
  process.exit(bad.length === 0 ? 0 : 1);
}

/** The inspector's page is missing or older than web/, its Vite config or the protocol module (apps/inspector/src/build.ts). */
function pageStale(dir) {
  const index = join(dir, "app", "index.html");
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return newestInput({ dir: relative(ROOT, dir), inputs: ["web", "vite.config.ts", "src/protocol.ts"] }) > built;
}

const bin = (name) => join(ROOT, "node_modules", ".bin", name);
function run(cmd, argv, cwd = ROOT) {
  const r = spawnSync(cmd, argv, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) {
    process.stderr.write(`build: ${relative(ROOT, cmd)} ${argv.join(" ")} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}

/** Writes a package's new dist/ beside the old one, then swaps it in. */
async function buildInto(pkg, write) {
  const dir = join(ROOT, pkg.dir);
  const next = join(dir, "dist.next");
  rmSync(next, { recursive: true, force: true });
  const newest = newestInput(pkg);
  await write(next);
  writeFileSync(
    join(next, "build.json"),
    `${JSON.stringify({ package: pkg.name, newestInput: newest, builtAt: new Date().toISOString() })}\n`,
  );
  const old = join(dir, "dist.old");
  rmSync(old, { recursive: true, force: true });
  if (existsSync(join(dir, "dist"))) renameSync(join(dir, "dist"), old);
  renameSync(next, join(dir, "dist"));
  rmSync(old, { recursive: true, force: true });
}

const started = Date.now();
for (const pkg of PACKAGES) {
  const t = Date.now();
  const dir = join(ROOT, pkg.dir);
  if (pkg.name === "@strata/cli") {
    const { rolldown } = await import("rolldown");
    await buildInto(pkg, async (next) => {
      const bundle = await rolldown({
        cwd: ROOT,
        input: { main: join(dir, "src", "main.ts") },
        platform: "node",
        // the strata packages are compiled in from their sources; everything else stays a dependency
        // (and @strata/inspector/package.json, which names the inspector's directory: its page)
        resolve: { conditionNames: ["@strata/source", "import", "node", "default"] },
        external: (id) => /^(node:|[^./@]|@(?!strata\/))/.test(id) || /^@strata\/[^/]+\/package\.json$/.test(id),
        treeshake: true,
        logLevel: "warn",
      });
      const written = await bundle.write({
        dir: next,
        format: "esm",
        sourcemap: true,
        chunkFileNames: "[name]-[hash].js",
        comments: { legal: false },
      });
      await bundle.close();
      if (process.env.STRATA_BUILD_METAFILE)
        writeFileSync(
          process.env.STRATA_BUILD_METAFILE,
          JSON.stringify(
            written.output
              .filter((o) => o.type === "chunk")
              .map((o) => ({ file: o.fileName, bytes: o.code.length, imports: o.imports, dynamic: o.dynamicImports })),
          ),
        );
      run(bin("tsc"), ["-p", join(dir, "tsconfig.build.json"), "--emitDeclarationOnly", "--outDir", next]);
      cpSync(join(ROOT, "fixtures", "models", "demo.json"), join(next, "demo", "demo.json"));
      cpSync(join(ROOT, "fixtures", "demo-workspace"), join(next, "demo", "workspace"), { recursive: true });
    });
  } else {
    await buildInto(pkg, async (next) => run(bin("tsc"), ["-p", join(dir, "tsconfig.build.json"), "--outDir", next]));
    // The page (app/) is rebuilt only when one of its sources is newer: tests serve it while they run.
    if (pkg.name === "@strata/inspector" && pageStale(dir)) {
      const vite = await import("vite");
      await vite.build({ configFile: join(dir, "vite.config.ts"), logLevel: "error" });
    }
  }
  say(`built ${pkg.name} (${Date.now() - t} ms)`);
}
say(`build: ${PACKAGES.length} packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
