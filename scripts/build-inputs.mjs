/**
 * What each package's build reads, and whether a dist/ is current: shared by scripts/build.mjs
 * (which builds and `--check`s) and a checkout's `apps/cli/bin/strata.mjs` (which runs dist/ only
 * when it is current). Plain Node, no dependencies.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The packages in dependency order, each with what its build reads. */
export const PACKAGES = [
  { name: "@strata/dom", dir: "packages/dom", inputs: ["src"] },
  { name: "@strata/store", dir: "packages/store", inputs: ["src", "test/conformance"] },
  { name: "@strata/store-postgres", dir: "packages/store-postgres", inputs: ["src", "test/pg-server.ts"] },
  { name: "@strata/engine", dir: "packages/engine", inputs: ["src"] },
  { name: "@strata/agent", dir: "packages/agent", inputs: ["src"] },
  { name: "@strata/models", dir: "packages/models", inputs: ["src"] },
  { name: "@strata/import", dir: "packages/import", inputs: ["src"] },
  { name: "@strata/inspector", dir: "apps/inspector", inputs: ["src", "web", "vite.config.ts"] },
  {
    name: "@strata/cli",
    dir: "apps/cli",
    inputs: ["src", "../../packages/*/src", "../inspector/src", "../../fixtures/models/demo.json", "../../fixtures/demo-workspace"],
  },
];

/** The newest modification time under each input of a package (globs: one `*` segment). */
export function newestInput(pkg) {
  let t = 0;
  const visit = (path) => {
    const s = statSync(path);
    if (!s.isDirectory()) t = Math.max(t, s.mtimeMs);
    else for (const e of readdirSync(path)) visit(join(path, e));
  };
  for (const input of [...pkg.inputs, "package.json", "tsconfig.build.json"]) {
    const [head, tail] = input.split("/*/");
    if (tail === undefined) {
      const p = join(ROOT, pkg.dir, input);
      if (existsSync(p)) visit(p);
    } else {
      const base = join(ROOT, pkg.dir, head);
      for (const d of readdirSync(base)) if (existsSync(join(base, d, tail))) visit(join(base, d, tail));
    }
  }
  return t;
}

/** Why a package's dist/ cannot be used ("not built", "older than its sources"), or undefined when it is current. */
export function stale(pkg) {
  const stamp = join(ROOT, pkg.dir, "dist", "build.json");
  if (!existsSync(stamp)) return "not built";
  const built = JSON.parse(readFileSync(stamp, "utf8")).newestInput;
  return newestInput(pkg) > built ? "older than its sources" : undefined;
}
