/**
 * Where sessions live by default (CLI-44, decision 0043), through the real binary: inside a git
 * work tree every directory of the project finds the project's database (the nearest one up to
 * the root, else the root's, made there); outside one only the current directory's; --db and
 * STRATA_DB win; a database above the work tree, or above an unversioned directory, is never used.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, json, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

const gitInit = (dir: string): void => {
  mkdirSync(dir, { recursive: true });
  execFileSync("git", ["init", "-q", dir]);
};

const sessions = async (cwd: string, env: Record<string, string> = {}): Promise<string[]> => {
  const r = await strata(cwd, ["ls", "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return json<{ sessions: { id: string }[] }>(r).sessions.map((s) => s.id);
};

describe("CLI-44 the default database", () => {
  it("inside a git work tree: made at the root from any directory of it, and found from every other", async () => {
    const top = tempDir();
    const proj = join(top, "proj");
    gitInit(proj);
    mkdirSync(join(proj, "src", "deep"), { recursive: true });
    mkdirSync(join(proj, "docs"), { recursive: true });
    const run = await strata(join(proj, "src", "deep"), ["run", "-q"]);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(proj, ".strata", "strata.db"))).toBe(true);
    expect(existsSync(join(proj, "src", "deep", ".strata", "strata.db"))).toBe(false);
    const fromRoot = await sessions(proj);
    expect(fromRoot).toHaveLength(1);
    expect(await sessions(join(proj, "docs"))).toEqual(fromRoot);
    expect(await sessions(join(proj, "src"))).toEqual(fromRoot);
    // the same session by @last from anywhere in the project
    const shown = await strata(join(proj, "docs"), ["show", "@last", "--select", "meta", "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    // outside the work tree (its parent) there is none
    const outside = await strata(top, ["ls"]);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/no strata database at .*\.strata\/strata\.db/);
    expect(outside.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("the nearest database wins: a sub-project's own .strata is used below it, the root's elsewhere", async () => {
    const proj = join(tempDir(), "proj");
    gitInit(proj);
    mkdirSync(join(proj, "pkg", "lib"), { recursive: true });
    expect((await strata(proj, ["run", "-q"])).code).toBe(0);
    const rootIds = await sessions(proj);
    // a database of its own in pkg/ (made with --db), then found from below pkg/
    const own = await strata(join(proj, "pkg"), ["run", "-q", "--db", join(proj, "pkg", ".strata", "strata.db")]);
    expect(own.code, own.stderr).toBe(0);
    const pkgIds = await sessions(join(proj, "pkg", "lib"));
    expect(pkgIds).toHaveLength(1);
    expect(pkgIds).not.toEqual(rootIds);
    expect(await sessions(join(proj, "pkg"))).toEqual(pkgIds);
    expect(await sessions(proj)).toEqual(rootIds);
  }, 120_000);

  it("outside a git work tree only the current directory's; a parent's database is never picked up", async () => {
    const top = tempDir();
    expect((await strata(top, ["run", "-q"])).code).toBe(0);
    expect(await sessions(top)).toHaveLength(1);
    const below = join(top, "elsewhere");
    mkdirSync(below);
    const r = await strata(below, ["ls"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(join(below, ".strata", "strata.db"));
    // and a git work tree below an unrelated database does not reach above its root either
    const proj = join(top, "proj");
    gitInit(proj);
    const inProj = await strata(proj, ["ls"]);
    expect(inProj.code).toBe(1);
    expect(inProj.stderr).toContain(join(proj, ".strata", "strata.db"));
  }, 120_000);

  it("--db and STRATA_DB name the database wherever the command runs; an empty STRATA_DB is unset", async () => {
    const top = tempDir();
    const proj = join(top, "proj");
    gitInit(proj);
    mkdirSync(join(proj, "src"));
    const db = join(top, "shared.db");
    expect((await strata(join(proj, "src"), ["run", "-q", "--db", db])).code).toBe(0);
    expect(existsSync(join(proj, ".strata", "strata.db"))).toBe(false);
    const ids = await sessions(top, { STRATA_DB: db });
    expect(ids).toHaveLength(1);
    expect(await sessions(join(proj, "src"), { STRATA_DB: db })).toEqual(ids);
    const unset = await strata(join(proj, "src"), ["ls"], { env: { STRATA_DB: "" } });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain(join(proj, ".strata", "strata.db"));
  }, 120_000);
});
