/**
 * PK-1 … PK-4: the packages as someone outside this repository gets them. Builds every package
 * (scripts/build.mjs), packs each with `npm pack`, installs the tarballs with plain `npm` into a
 * fresh project in the temp directory, and then — with plain `node`, no tsx, no TypeScript at run
 * time, none of the repository on the module path — runs a harness of its own there (a custom tool
 * with its own schema and replay policy, the scripted model, a kill -9 in the middle of a call,
 * resume, fork, the prompt at an earlier event), type-checks a file against the published types,
 * and runs the packed `strata` command through `npx strata`.
 *
 * better-sqlite3 installs without its build script, and its compiled addon is the one this
 * checkout's install built (what `prebuild-install` would download on a machine with access to
 * GitHub; compiling it again takes two minutes here). STRATA_CONSUMER_COMPILE=1 compiles it.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const HERE = join(import.meta.dirname, "consumer");
const PACKAGES = [
  "packages/dom",
  "packages/store",
  "packages/store-postgres",
  "packages/engine",
  "packages/agent",
  "packages/models",
  "packages/import",
  "apps/inspector",
  "apps/cli",
];

/** The environment of a process outside the repository: no source condition, no strata settings. */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (/^(STRATA_|OPENAI_|npm_)/.test(k) && !(k in extra)) delete env[k];
  return env;
}

let temp = "";
let project = "";
const tarballs = new Map<string, string>();

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = outsideEnv()) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function must(cmd: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const r = run(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), "strata-consumer-"));
  // PK-1: the build is current — built now, from these sources, and checked.
  must(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--quiet"], ROOT);
  must(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--check"], ROOT);
  const packs = join(temp, "tarballs");
  mkdirSync(packs);
  for (const dir of PACKAGES) {
    const out = must("npm", ["pack", "--json", "--pack-destination", packs], join(ROOT, dir), outsideEnv());
    const [info] = JSON.parse(out) as { name: string; filename: string }[];
    if (info === undefined) throw new Error(`npm pack in ${dir} printed no package`);
    tarballs.set(info.name, join(packs, info.filename));
  }
  project = join(temp, "project");
  mkdirSync(project);
  const deps = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "consumer",
        private: true,
        type: "module",
        dependencies: deps,
        overrides: deps,
        devDependencies: { "@types/node": "20.19.43" },
      },
      null,
      2,
    ),
  );
  const compile = process.env.STRATA_CONSUMER_COMPILE === "1";
  must("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...(compile ? [] : ["--ignore-scripts"])], project);
  if (!compile) {
    const addon = "build/Release/better_sqlite3.node";
    const built = join(ROOT, "packages", "store", "node_modules", "better-sqlite3", addon);
    mkdirSync(join(project, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true });
    copyFileSync(built, join(project, "node_modules", "better-sqlite3", addon));
  }
  for (const f of readdirSync(HERE)) copyFileSync(join(HERE, f), join(project, f));
}, 600_000);

afterAll(() => {
  if (temp !== "") rmSync(temp, { recursive: true, force: true });
});

describe("PK-1 every package packs to a tarball of built ES modules with types", () => {
  it("each tarball has its exports' targets, its types, its license, and no TypeScript source on a runtime path", () => {
    for (const dir of PACKAGES) {
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
      const installed = join(project, "node_modules", manifest.name);
      expect({ dir, license: existsSync(join(installed, "LICENSE")), engines: manifest.engines?.node }).toEqual({
        dir,
        license: true,
        engines: ">=20.19",
      });
      expect(manifest.private).toBeUndefined();
      for (const [key, target] of Object.entries(manifest.exports as Record<string, string | Record<string, string>>)) {
        if (typeof target === "string") continue;
        for (const condition of ["types", "default"]) {
          const file = target[condition] as string;
          expect({ dir, key, condition, file, exists: existsSync(join(installed, file)) }).toEqual({
            dir,
            key,
            condition,
            file,
            exists: true,
          });
          expect(file.endsWith(".ts") && !file.endsWith(".d.ts")).toBe(false);
        }
      }
      for (const dep of Object.keys(manifest.dependencies ?? {}))
        expect({ dir, dep, spec: manifest.dependencies[dep] }).not.toEqual({ dir, dep, spec: expect.stringMatching(/^workspace:/) });
    }
    // the inspector ships its page built
    expect(existsSync(join(project, "node_modules", "@strata", "inspector", "app", "index.html"))).toBe(true);
    // the command carries its own demo
    expect(existsSync(join(project, "node_modules", "@strata", "cli", "dist", "demo", "demo.json"))).toBe(true);
  });
});

describe("PK-2 the packed packages work outside the workspace with plain node", () => {
  it("a harness of its own: custom tool, scripted model, kill -9 mid-call, resume, fork, the prompt at an earlier event", async () => {
    const db = join(project, "harness.db");
    const runs = join(project, "runs.txt");
    writeFileSync(runs, "");
    const child: ChildProcess = spawn(process.execPath, ["agent.mjs", "start", db, runs], {
      cwd: project,
      env: outsideEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr?.on("data", (c) => {
      err += c;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no RUNNING line in 60 s; stdout ${out}; stderr ${err}`)), 60_000);
      child.stdout?.on("data", (c) => {
        out += c;
        if (out.includes("RUNNING deploy")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (code) => reject(new Error(`the harness exited (${code}) before its call ran: ${out}${err}`)));
    });
    child.removeAllListeners("exit");
    const exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const session = /SESSION (\S+)/.exec(out)?.[1] as string;
    expect(session).toMatch(/^[0-9A-Z]{26}$/);
    const resumed = must(process.execPath, ["agent.mjs", "resume", db, runs, session], project);
    const result = JSON.parse(/RESULT (.*)/.exec(resumed)?.[1] as string);
    // the never-repeat call was running when the process died: it is not run again
    expect(readFileSync(runs, "utf8").trim().split("\n")).toEqual(["fetch", "deploy"]);
    expect(result.interrupted).toEqual(["deploy:running"]);
    expect(result.calls).toEqual(["fetch:executed", "deploy:interrupted"]);
    expect(result.system).toBe("You are the consumer harness; 2 tools.");
    expect(result.earlierMessages).toBeLessThan(result.headMessages);
    expect(result.branches).toEqual(["main", "try-2"]);
    expect({ fork: result.forkNotes, main: result.mainNotes }).toEqual({ fork: 1, main: 0 });
  }, 120_000);

  it("type-checks against the published types (strict, no skipLibCheck), and a wrong use of them fails", () => {
    const tsc = join(ROOT, "node_modules", ".bin", "tsc");
    const ok = run(tsc, ["-p", "tsconfig.json"], project);
    expect({ code: ok.code, out: ok.stdout + ok.stderr }).toEqual({ code: 0, out: "" });
    writeFileSync(join(project, "tsconfig.bad.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["bad.ts"] }));
    const bad = run(tsc, ["-p", "tsconfig.bad.json"], project);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toMatch(/bad\.ts\(5,.*TS2322/);
    expect(bad.stdout).toMatch(/bad\.ts\(6,/);
  });
});

describe("PK-2 the example harness (examples/harness) runs against the packed packages", () => {
  it("start, kill -9 during the slow never-repeat call, resume, prompt, fork, rewind", async () => {
    const dir = mkdtempSync(join(temp, "harness-"));
    copyFileSync(join(ROOT, "examples", "harness", "harness.mjs"), join(project, "harness.mjs"));
    const h = join(project, "harness.mjs");
    const env = outsideEnv({ HARNESS_SLOW_MS: "60000" });
    const child = spawn(process.execPath, [h, "start", "demo.db"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the harness never reached its slow call: ${out}`)), 60_000);
      child.stdout?.on("data", (c) => {
        out += c;
        if (/SLOW deploy/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const exited = new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    const id = /^SESSION (\S+)/m.exec(out)?.[1] as string;
    const step = (args: string[]) => run(process.execPath, [h, ...args], dir, env);
    const resumed = step(["resume", "demo.db", id]);
    expect({ code: resumed.code, interrupted: /deploy: interrupted/.test(resumed.stdout) }).toEqual({ code: 0, interrupted: true });
    // the never-repeat deploy started once: before the kill, not again on resume
    expect(readFileSync(join(dir, "demo.db.deploys"), "utf8").trim().split("\n")).toHaveLength(1);
    for (const args of [
      ["prompt", "demo.db", id, "13"],
      ["fork", "demo.db", id, "13"],
      ["rewind", "demo.db", id, "10"],
    ]) {
      const r = step(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
    }
    expect(step(["prompt", "demo.db"]).code).toBe(2);
  }, 180_000);
});

describe("PK-3 the packed command runs through npx, compiled, loading only what the command needs", () => {
  it("npx strata: help, the offline demo, ls, show and the inspector's page", async () => {
    const work = join(temp, "work");
    mkdirSync(work);
    const help = must("npx", ["--no-install", "strata", "--help"], project);
    expect(help).toContain("usage: strata <command>");
    const db = join(work, ".strata", "strata.db");
    const env = outsideEnv();
    const demo = run(join(project, "node_modules", ".bin", "strata"), ["run", "-q"], work, env);
    expect({ code: demo.code, out: demo.stdout.trim() }).toEqual({ code: 0, out: expect.stringMatching(/^\S+@main completed-by-tool$/) });
    expect(readFileSync(join(work, ".strata", "demo", "SUMMARY.md"), "utf8")).toContain("Decisions");
    const ls = JSON.parse(must("npx", ["--no-install", "strata", "--db", db, "ls", "--json"], project));
    expect(ls.sessions).toHaveLength(1);
    const show = must("npx", ["--no-install", "strata", "--db", db, "show", "@last", "--select", "call", "--json"], project);
    expect(JSON.parse(show)).toBeTruthy();
    // the inspector serves its page from the installed @strata/inspector
    const serve = spawn(join(project, "node_modules", ".bin", "strata"), ["--db", db, "serve", "--port", "0", "--json"], {
      cwd: work,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = "";
        serve.stdout?.on("data", (c) => {
          text += c;
          const m = /"url":\s*"([^"]+)"/.exec(text);
          if (m) resolve(m[1] as string);
        });
        serve.on("exit", (code) => reject(new Error(`serve exited ${code}: ${text}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      // the page's own code is in the shipped bundle (not tree-shaken away: its modules define custom elements)
      const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1] as string;
      const code = await (await fetch(new URL(script, url))).text();
      expect({ script, bytes: code.length > 20_000, elements: code.includes("customElements") }).toEqual({
        script,
        bytes: true,
        elements: true,
      });
      const sessions = await (await fetch(new URL("/api/sessions", url))).json();
      expect(JSON.stringify(sessions)).toContain(ls.sessions[0].id);
    } finally {
      serve.kill("SIGTERM");
    }
  }, 180_000);

  it("--help loads neither the store nor ajv; ls loads the store but not ajv, the template engine, the model clients or node:crypto", () => {
    const loads = (args: readonly string[]): string[] => {
      const file = join(temp, `loads-${args.at(-1)}.txt`);
      writeFileSync(file, "");
      must(
        process.execPath,
        ["--import", "./loads.mjs", join(project, "node_modules", "@strata", "cli", "bin", "strata.mjs"), ...args],
        project,
        outsideEnv({ STRATA_LOADS: file }),
      );
      return readFileSync(file, "utf8").trim().split("\n");
    };
    const help = loads(["--help"]);
    expect(help.some((u) => u.includes("/@strata/cli/dist/main.js"))).toBe(true);
    expect(help.filter((u) => /better-sqlite3|\/ajv\/|\/src\/.*\.ts$|^node:crypto\b/.test(u))).toEqual([]);
    const work = mkdtempSync(join(temp, "loads-"));
    must(join(project, "node_modules", ".bin", "strata"), ["run", "-q"], work);
    const ls = loads(["--db", join(work, ".strata", "strata.db"), "ls"]);
    expect(ls.some((u) => u.includes("better-sqlite3"))).toBe(true);
    // (node:crypto loads on the first hash or random id: a listing needs neither)
    expect(ls.filter((u) => /\/(ajv|vite|lit)\/|^node:crypto\b/.test(u))).toEqual([]);
    const chunks = (urls: string[]) =>
      new Set(urls.filter((u) => u.includes("/@strata/cli/dist/")).map((u) => u.replace(/.*\/dist\//, "")));
    // the agent's, the prompt's and the inspector's code are in chunks `ls` does not load
    const lsChunks = chunks(ls);
    for (const name of ["agent-", "prompt-", "serve-", "check-"]) expect([...lsChunks].filter((c) => c.startsWith(name))).toEqual([]);
    // commands that read or branch a session (fork, show, prompt) run no tools: no tool registry, no ajv
    const db = join(work, ".strata", "strata.db");
    const listed = JSON.parse(must(join(project, "node_modules", ".bin", "strata"), ["--db", db, "ls", "--json"], work)) as {
      sessions: { id: string }[];
    };
    const id = listed.sessions[0]?.id as string;
    for (const args of [
      ["fork", `${id}@5`, "--name", "loads"],
      ["show", `${id}@5`],
      ["prompt", `${id}@5`],
    ]) {
      const urls = loads(["--db", db, ...args]);
      expect(
        urls.filter((u) => /\/ajv\//.test(u)),
        args[0],
      ).toEqual([]);
    }
  });
});

describe("PK-4 a checkout runs its build when current and its sources otherwise", () => {
  it("the repository's strata runs dist/ after a build, and the sources once one of them is newer", () => {
    const bin = join(ROOT, "apps", "cli", "bin", "strata.mjs");
    const loads = (): string[] => {
      const file = join(temp, `checkout-${Date.now()}.txt`);
      writeFileSync(file, "");
      must(process.execPath, ["--import", join(HERE, "loads.mjs"), bin, "--version"], ROOT, outsideEnv({ STRATA_LOADS: file }));
      return readFileSync(file, "utf8").trim().split("\n");
    };
    expect(loads().some((u) => u.endsWith("/apps/cli/dist/main.js"))).toBe(true);
    // a source newer than the build (its time only, put back after)
    const source = join(ROOT, "packages", "engine", "src", "index.ts");
    const { atime, mtime } = statSync(source);
    try {
      utimesSync(source, atime, new Date(Date.now() + 60_000));
      const urls = loads();
      expect(urls.some((u) => u.endsWith("/apps/cli/src/main.ts"))).toBe(true);
      expect(urls.some((u) => u.endsWith("/apps/cli/dist/main.js"))).toBe(false);
      expect(run(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--check"], ROOT).code).toBe(1);
    } finally {
      utimesSync(source, atime, mtime);
    }
    expect(run(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--check"], ROOT).code).toBe(0);
  });
});
