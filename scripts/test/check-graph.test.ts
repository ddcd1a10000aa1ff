/**
 * The package graph check (docs/architecture.md, STYLE "Tooling"): the repository passes, and each
 * way of breaking the layering — the session core reaching the agent, a model client importing more
 * than the model boundary, a source file using an `internal` entry, an undeclared dependency, a
 * cycle — is reported, on a small repository written to a temp directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { check } from "../check-graph.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repository with the real package names; `files` maps paths to contents. */
function repo(files: Record<string, string>, deps: Record<string, string[]> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "strata-graph-"));
  dirs.push(root);
  const manifests: Record<string, string> = {
    "packages/dom": "@strata/dom",
    "packages/store": "@strata/store",
    "packages/engine": "@strata/engine",
    "packages/agent": "@strata/agent",
    "packages/models": "@strata/models",
  };
  const declared: Record<string, string[]> = {
    "@strata/engine": ["@strata/dom", "@strata/store"],
    "@strata/agent": ["@strata/engine", "@strata/dom", "@strata/store"],
    "@strata/models": ["@strata/agent"],
    ...deps,
  };
  for (const [dir, name] of Object.entries(manifests)) {
    mkdirSync(join(root, dir, "src"), { recursive: true });
    const dependencies = Object.fromEntries((declared[name] ?? []).map((d) => [d, "workspace:*"]));
    writeFileSync(join(root, dir, "package.json"), JSON.stringify({ name, dependencies }));
    writeFileSync(join(root, dir, "src", "index.ts"), "export const x = 1;\n");
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("the package graph check", () => {
  it("the repository is layered and acyclic", () => {
    expect(check()).toEqual([]);
  });

  it("a layered repository passes: the agent over the core, models over the model boundary, tests over internal entries", () => {
    const root = repo({
      "packages/engine/src/session.ts": 'import { Tree } from "@strata/dom";\nimport type { Store } from "@strata/store";\n',
      "packages/agent/src/loop.ts": 'import { Session } from "@strata/engine";\n',
      "packages/agent/test/loop.test.ts": 'import { Journal } from "@strata/engine/internal";\n',
      "packages/models/src/openai.ts": 'import { ModelError, type Model } from "@strata/agent/model";\n',
    });
    expect(check(root)).toEqual([]);
  });

  it("the session core may not import the agent, not even in its tests", () => {
    const root = repo({
      "packages/engine/src/session.ts": 'import { runAgent } from "@strata/agent";\n',
      "packages/engine/test/session.test.ts": 'const { recordInputs } = await import("@strata/agent");\n',
    });
    const problems = check(root);
    expect(problems).toContain("@strata/engine may not import @strata/agent (packages/engine/src/session.ts)");
    expect(problems).toContain("@strata/engine may not import @strata/agent (packages/engine/test/session.test.ts)");
    expect(problems.some((p) => p.startsWith("import cycle:"))).toBe(false);
  });

  it("model clients import the model boundary only: not the agent's main entry, not the session core", () => {
    const root = repo(
      {
        "packages/models/src/a.ts": 'import { runAgent } from "@strata/agent";\n',
        "packages/models/src/b.ts": 'import { Session } from "@strata/engine";\n',
        // their tests may drive the real loop
        "packages/models/test/loop.test.ts": 'import { runAgent } from "@strata/agent";\nimport { Session } from "@strata/engine";\n',
      },
      { "@strata/models": ["@strata/agent", "@strata/engine"] },
    );
    expect(check(root)).toEqual([
      "@strata/models may not import @strata/agent (packages/models/src/a.ts)",
      "@strata/models may not import @strata/engine (packages/models/src/b.ts)",
    ]);
  });

  it("internal entries are for tests and benchmarks; imports must be declared", () => {
    const root = repo(
      { "packages/agent/src/loop.ts": 'import { Journal } from "@strata/engine/internal";\n' },
      { "@strata/agent": ["@strata/dom"] },
    );
    expect(check(root)).toEqual([
      "@strata/agent imports @strata/engine/internal (packages/agent/src/loop.ts) but does not declare @strata/engine in package.json",
      "packages/agent/src/loop.ts imports @strata/engine/internal, which only tests and benchmarks may use; use @strata/engine's public entry",
    ]);
  });

  it("a cycle is reported, and so is a package the check does not know", () => {
    const root = repo(
      {
        "packages/engine/src/a.ts": 'import { x } from "@strata/agent";\n',
        "packages/agent/src/b.ts": 'import { x } from "@strata/engine";\n',
        "packages/extra/package.json": JSON.stringify({ name: "@strata/extra" }),
      },
      { "@strata/engine": ["@strata/agent"] },
    );
    const problems = check(root);
    expect(problems).toContain("@strata/extra is not listed in scripts/check-graph.ts; add it with the packages it may import");
    const cycles = problems.filter((p) => p.startsWith("import cycle:"));
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatch(
      /^import cycle: (@strata\/engine -> @strata\/agent -> @strata\/engine|@strata\/agent -> @strata\/engine -> @strata\/agent)$/,
    );
  });
});
