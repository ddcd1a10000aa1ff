/**
 * Keeps the package graph acyclic and layered (DESIGN §9, STYLE "Tooling"): reads every package's
 * manifest and every import in its sources, and fails when a package imports a repo package it may
 * not depend on, or one its manifest does not declare, or when the graph has a cycle.
 *
 * Usage: tsx scripts/check-graph.ts [--json]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Which repo packages each package may import. Anything not listed may import nothing. */
export const ALLOWED: Record<string, readonly string[]> = {
  "@strata/dom": [],
  "@strata/store": [],
  "@strata/engine": ["@strata/dom", "@strata/store"],
  "@strata/models": ["@strata/engine", "@strata/dom", "@strata/store"],
  "@strata/cli": ["@strata/engine", "@strata/models", "@strata/dom", "@strata/store", "@strata/inspector"],
  "@strata/inspector": ["@strata/engine", "@strata/dom", "@strata/store"],
};

interface Pkg {
  name: string;
  dir: string;
  declared: Set<string>;
  imports: Map<string, string>; // imported repo package -> first file importing it
}

const root = join(import.meta.dirname, "..");

function packages(): Pkg[] {
  const out: Pkg[] = [];
  for (const group of ["packages", "apps"]) {
    let entries: string[] = [];
    try {
      entries = readdirSync(join(root, group));
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
    if (entry === "node_modules" || entry === "dist") continue;
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry)) out.push(p);
  }
  return out;
}

const IMPORT =
  /(?:^|\s)(?:import|export)\s[^'"]*?from\s*["'](@strata\/[^/"']+)|import\(\s*["'](@strata\/[^/"']+)|require\(\s*["'](@strata\/[^/"']+)/gm;

export function check(): string[] {
  const pkgs = packages();
  const problems: string[] = [];
  for (const p of pkgs) {
    for (const file of sources(p.dir)) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(IMPORT)) {
        const target = (m[1] ?? m[2] ?? m[3]) as string;
        if (target === p.name) continue;
        if (!p.imports.has(target)) p.imports.set(target, relative(root, file));
      }
      // Reaching into another package's files by path bypasses the graph.
      if (/from\s*["'](?:\.\.\/)+(?:packages|apps)\//.test(text) || /from\s*["']\.\.\/\.\.\/[a-z]+\/src\//.test(text))
        problems.push(`${relative(root, file)} imports another package by relative path; import it by name`);
    }
    const allowed = ALLOWED[p.name];
    if (allowed === undefined) {
      problems.push(`${p.name} is not listed in scripts/check-graph.ts; add it with the packages it may import`);
      continue;
    }
    for (const [target, file] of p.imports) {
      if (!allowed.includes(target)) problems.push(`${p.name} may not import ${target} (${file})`);
      else if (!p.declared.has(target)) problems.push(`${p.name} imports ${target} (${file}) but does not declare it in package.json`);
    }
  }
  // Cycle check over the actual imports.
  const graph = new Map(pkgs.map((p) => [p.name, [...p.imports.keys()]]));
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
  else if (problems.length === 0) console.log(`package graph ok (${packages().length} packages, acyclic, layered)`);
  else for (const p of problems) console.error(`graph: ${p}`);
  process.exit(problems.length === 0 ? 0 : 1);
}
