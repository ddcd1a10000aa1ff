/**
 * Keeps the package graph acyclic and layered (DESIGN §9, STYLE "Tooling", docs/architecture.md):
 * reads every package's manifest and every import in its sources, and fails when a package imports
 * a repo package (or an entry of one) it may not depend on, or one its manifest does not declare,
 * when a source file reaches another package's `internal` entry, or when the graph has a cycle.
 *
 *   @strata/dom, @strata/store   import no repo package
 *   @strata/store-postgres       store                            (the PostgreSQL backend of its port)
 *   @strata/engine               dom, store                       (the session core)
 *   @strata/agent                engine, dom, store               (tools, templates, prompts, the loop)
 *   @strata/models               @strata/agent/model only         (the model boundary, nothing else)
 *   @strata/import               agent, engine, dom, store        (foreign sessions as strata sessions)
 *   apps, bench                  what they use
 *
 * `@strata/x/internal` entries hold what tests and benchmarks need beyond a package's surface:
 * only test files (under a `test/` directory) and the benchmarks may import them.
 *
 * Usage: tsx scripts/check-graph.ts [--json]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

/**
 * What each package's sources may import: a package name allows every entry of it, a subpath
 * (`@strata/agent/model`) that entry alone. Anything not listed may import nothing.
 */
export const ALLOWED: Record<string, readonly string[]> = {
  "@strata/dom": [],
  "@strata/store": [],
  "@strata/store-postgres": ["@strata/store"],
  "@strata/engine": ["@strata/dom", "@strata/store"],
  "@strata/agent": ["@strata/engine", "@strata/dom", "@strata/store"],
  "@strata/models": ["@strata/agent/model"],
  "@strata/import": ["@strata/agent", "@strata/engine", "@strata/dom", "@strata/store"],
  "@strata/cli": [
    "@strata/store-postgres",
    "@strata/agent",
    "@strata/engine",
    "@strata/models",
    "@strata/import",
    "@strata/dom",
    "@strata/store",
    "@strata/inspector",
  ],
  "@strata/inspector": ["@strata/agent", "@strata/engine", "@strata/dom", "@strata/store"],
  "@strata/bench": [
    "@strata/agent",
    "@strata/engine",
    "@strata/dom",
    "@strata/store",
    "@strata/store-postgres",
    "@strata/inspector",
    "@strata/import",
  ],
};

/**
 * What a package's tests may import besides (development dependencies): the model clients' tests
 * drive the real loop end to end; the session core's, the agent's and the inspector's run on
 * PostgreSQL too (decisions 0036, 0038). The session core's tests may not reach the agent.
 */
export const ALLOWED_IN_TESTS: Record<string, readonly string[]> = {
  "@strata/models": ["@strata/agent", "@strata/engine", "@strata/store"],
  "@strata/engine": ["@strata/store-postgres"],
  "@strata/agent": ["@strata/store-postgres"],
  "@strata/inspector": ["@strata/store-postgres"],
};

/** Packages whose every file may import `internal` entries (they measure what tests test). */
const INTERNAL_USERS: ReadonlySet<string> = new Set(["@strata/bench"]);

interface Pkg {
  name: string;
  dir: string;
  declared: Set<string>;
  /** imported specifier (`@strata/x` or `@strata/x/entry`) -> first file importing it */
  imports: Map<string, string>;
}

const ROOT = join(import.meta.dirname, "..");

function packages(root: string): Pkg[] {
  const out: Pkg[] = [];
  for (const group of ["packages", "apps", "."]) {
    let entries: string[] = [];
    try {
      entries = group === "." ? ["bench"] : readdirSync(join(root, group));
    } catch {
      continue;
    }
    for (const entry of entries) {
      const dir = join(root, group, entry);
      let manifest: { name?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      try {
        manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      } catch {
        continue;
      }
      if (manifest.name === undefined) continue;
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]);
      out.push({ name: manifest.name, dir, declared, imports: new Map() });
    }
  }
  return out;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry === "dist" || entry === "results") continue;
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry)) out.push(p);
  }
  return out;
}

const IMPORT =
  /(?:^|\s)(?:import|export)\s[^'"]*?from\s*["'](@strata\/[^"']+)|import\(\s*["'](@strata\/[^"']+)|require\(\s*["'](@strata\/[^"']+)/gm;

/** `@strata/agent/model` → `@strata/agent`. */
const packageOf = (specifier: string): string => specifier.split("/").slice(0, 2).join("/");

const allows = (list: readonly string[], specifier: string): boolean => list.includes(specifier) || list.includes(packageOf(specifier));

/** The problems of the repository at `root` (none: the graph is layered and acyclic). */
export function check(root: string = ROOT): string[] {
  const pkgs = packages(root);
  const problems: string[] = [];
  for (const p of pkgs) {
    const allowed = ALLOWED[p.name];
    if (allowed === undefined) {
      problems.push(`${p.name} is not listed in scripts/check-graph.ts; add it with the packages it may import`);
      continue;
    }
    const inTests = [...allowed, ...(ALLOWED_IN_TESTS[p.name] ?? [])];
    for (const file of sources(p.dir)) {
      const rel = relative(root, file);
      const isTest = relative(p.dir, file).split(sep).includes("test");
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(IMPORT)) {
        const specifier = (m[1] ?? m[2] ?? m[3]) as string;
        const target = packageOf(specifier);
        if (target === p.name) continue;
        if (!p.imports.has(specifier)) p.imports.set(specifier, rel);
        if (!allows(isTest ? inTests : allowed, specifier)) problems.push(`${p.name} may not import ${specifier} (${rel})`);
        else if (!p.declared.has(target))
          problems.push(`${p.name} imports ${specifier} (${rel}) but does not declare ${target} in package.json`);
        if (specifier.endsWith("/internal") && !isTest && !INTERNAL_USERS.has(p.name))
          problems.push(`${rel} imports ${specifier}, which only tests and benchmarks may use; use ${target}'s public entry`);
      }
      // Reaching into another package's files by path bypasses the graph.
      if (/from\s*["'](?:\.\.\/)+(?:packages|apps)\//.test(text) || /from\s*["']\.\.\/\.\.\/[a-z]+\/src\//.test(text))
        problems.push(`${rel} imports another package by relative path; import it by name`);
    }
  }
  // Cycle check over the actual imports, by package.
  const graph = new Map(pkgs.map((p) => [p.name, [...new Set([...p.imports.keys()].map(packageOf))]]));
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]): void => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      problems.push(`import cycle: ${[...path.slice(path.indexOf(name)), name].join(" -> ")}`);
      return;
    }
    state.set(name, "visiting");
    for (const next of graph.get(name) ?? []) visit(next, [...path, name]);
    state.set(name, "done");
  };
  for (const name of graph.keys()) visit(name, []);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = check();
  if (process.argv.includes("--json")) console.log(JSON.stringify({ ok: problems.length === 0, problems }));
  else if (problems.length === 0) console.log(`package graph ok (${packages(ROOT).length} packages, acyclic, layered)`);
  else for (const p of problems) console.error(`graph: ${p}`);
  process.exit(problems.length === 0 ? 0 : 1);
}
