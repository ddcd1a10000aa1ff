/**
 * WS-7, WS-8: ignore rules mean what they mean to git. The reference is git itself: random and
 * handwritten ignore files and paths, laid out twice — once with `.gitignore` + `.strataignore`
 * for strata, once with their concatenation as `.gitignore` for git (a `.strataignore` wins over
 * the `.gitignore` of its directory, as later lines of one file do) — and every path asked of
 * `IgnoreRules.ignores` and of `git check-ignore --no-index`; a baseline capture must record
 * exactly the files `git ls-files --others --exclude-standard` lists.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreRules, WorkspaceTracker } from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import { git, newSession } from "./workspace-kit.ts";

afterEach(cleanup);

interface Layout {
  /** dir → [.gitignore text, .strataignore text] */
  readonly ignores: ReadonlyMap<string, readonly [string, string]>;
  readonly files: readonly string[];
}

/** Every directory the files imply, and the files that are not also directories. */
function shape(paths: readonly string[]): { files: string[]; dirs: string[] } {
  const dirs = new Set<string>();
  for (const p of paths) for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) dirs.add(p.slice(0, i));
  return { files: [...new Set(paths)].filter((p) => !dirs.has(p)), dirs: [...dirs] };
}

function layOut(root: string, layout: Layout, forGit: boolean): void {
  const { files, dirs } = shape(layout.files);
  mkdirSync(root, { recursive: true });
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  for (const f of files) writeFileSync(join(root, f), f);
  for (const [d, [g, s]] of layout.ignores) {
    mkdirSync(join(root, d), { recursive: true });
    if (forGit) writeFileSync(join(root, d, ".gitignore"), s === "" ? g : `${g}${g === "" || g.endsWith("\n") ? "" : "\n"}${s}`);
    else {
      writeFileSync(join(root, d, ".gitignore"), g);
      if (s !== "") writeFileSync(join(root, d, ".strataignore"), s);
    }
  }
}

/** The paths of `queries` git says are ignored. */
function gitIgnored(root: string, queries: readonly string[]): Set<string> {
  let out = "";
  try {
    out = git(root, ["check-ignore", "--no-index", "--stdin", "-z"], queries.map((q) => `${q}\0`).join(""));
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    if (err.status !== 1) throw new Error(`git check-ignore failed: ${err.stderr}`);
    out = err.stdout ?? "";
  }
  return new Set(out.split("\0").filter((s) => s !== ""));
}

/** Asks both and returns the disagreements. */
function compare(layout: Layout): string[] {
  const base = mkdtempSync(join(tmpdir(), "strata-ignore-"));
  try {
    return compareIn(base, layout);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

function compareIn(base: string, layout: Layout): string[] {
  const ours = join(base, "ours");
  const theirs = join(base, "theirs");
  layOut(ours, layout, false);
  layOut(theirs, layout, true);
  git(theirs, ["init", "-q"]);
  const { files, dirs } = shape(layout.files);
  const queries = [...files.map((f) => ({ path: f, dir: false })), ...dirs.map((d) => ({ path: d, dir: true }))];
  const theirsSay = gitIgnored(
    theirs,
    queries.map((q) => q.path),
  );
  const rules = IgnoreRules.load(ours);
  const bad: string[] = [];
  for (const q of queries) {
    const mine = rules.ignores(q.path, q.dir);
    const git = theirsSay.has(q.path);
    if (mine !== git) bad.push(`${q.path}${q.dir ? "/" : ""}: strata ${mine ? "ignores" : "keeps"}, git ${git ? "ignores" : "keeps"}`);
  }
  return bad;
}

const SEGMENTS = ["a", "b", "ab", "ba", "a.b", ".x", "x.o", "é", "[a]", "a*", "q?", "foo", "bar", "foo bar", "#h", "!n"];
const PATTERN_PARTS = [
  "a",
  "b",
  "ab",
  "foo",
  "*",
  "**",
  "?",
  "a*",
  "*b",
  "*.o",
  "[ab]",
  "[!a]",
  "[^b]*",
  "[a-c]*",
  "\\*",
  "a\\*",
  "[[:alpha:]]*",
  "[[:punct:]]",
  "é",
  "?b",
  ".x",
  "\\[a]",
  "[]a]",
  "[a-]",
  "foo?bar",
  "\\#h",
  "\\!n",
  "x.o",
  "q?",
  "a**",
  "**b",
  "[ab",
  "a[",
  "a\\",
  "[[:bogus:]]",
  "[[:alpha:]",
  "[!]a]",
  "***",
  "a/**/",
];

const pathArb = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));
const patternArb = fc
  .record({
    neg: fc.boolean(),
    lead: fc.constantFrom("", "", "/", "**/"),
    parts: fc.array(fc.constantFrom(...PATTERN_PARTS), { minLength: 1, maxLength: 3 }),
    trail: fc.constantFrom("", "", "", "/", "/**", "  ", "\\ ", "/*"),
  })
  .map(({ neg, lead, parts, trail }) => `${neg ? "!" : ""}${lead}${parts.join("/")}${trail}`);
const fileArb = fc
  .record({
    lines: fc.array(fc.oneof(patternArb, fc.constantFrom("# comment", "", "   ", "!", "/", "\\#h", "\\!n")), { maxLength: 6 }),
    crlf: fc.boolean(),
    finalNewline: fc.boolean(),
    bom: fc.boolean(),
  })
  .map(({ lines, crlf, finalNewline, bom }) => {
    if (lines.length === 0) return "";
    const nl = crlf ? "\r\n" : "\n";
    return `${bom ? "\uFEFF" : ""}${lines.join(nl)}${finalNewline ? nl : ""}`;
  });
const layoutArb: fc.Arbitrary<Layout> = fc
  .record({
    files: fc.array(pathArb, { minLength: 3, maxLength: 25 }),
    ignores: fc.array(fc.tuple(fc.constantFrom("", "", "a", "a/b", "foo", "a/a"), fileArb, fc.oneof(fc.constant(""), fileArb)), {
      minLength: 1,
      maxLength: 4,
    }),
  })
  .map(({ files, ignores }) => ({
    // A file cannot also be a directory that holds an ignore file.
    files: files.filter((f) => !ignores.some(([d]) => d === f || d.startsWith(`${f}/`))),
    // A BOM is only meaningful at the start of a file: keep it out of the `.strataignore` part git reads as a middle.
    ignores: new Map(ignores.map(([d, g, s]) => [d, [g, s.replace(/^\uFEFF/, "")] as const])),
  }));

describe("WS-7 ignore rules against git check-ignore", () => {
  it("WS-7 handwritten cases: anchors, dir-only, negation, **, sets, escapes, trailing spaces, nested files", () => {
    const cases: Layout[] = [
      {
        ignores: new Map([["", ["*.o\n!keep.o\n/build/\ndocs/**/*.md\n**/tmp\nfoo/*/bar\n\\#h\n\\!n\na\\ \ntrail   \n", ""]]]),
        files: [
          "x.o",
          "keep.o",
          "sub/x.o",
          "build/out",
          "sub/build/out",
          "docs/a.md",
          "docs/x/y/z.md",
          "q/tmp/f",
          "foo/a/bar",
          "foo/a/b/bar",
          "#h",
          "!n",
          "a ",
          "trail",
        ],
      },
      {
        ignores: new Map([
          ["", ["a/\n", ""]],
          ["b", ["!a/\n*.b\n", "!x.b\n"]],
        ]),
        files: ["a/f", "b/a/f", "b/x.b", "b/y.b", "b/c/a/f"],
      },
      {
        ignores: new Map([["", ["d/\n!d/e/f\n[a-c]*\n[!x]?\n[[:digit:]]\n", ""]]]),
        files: ["d/e/f", "d/x", "ba", "zz", "xy", "1", "é"],
      },
      {
        ignores: new Map([["", ["foo**/bar\n**foo\nfoo/**\n/**/b\na/**/b/**/c\n", ""]]]),
        files: ["foox/y/bar", "xfoo", "foo/q/r", "a/b", "q/b", "a/x/b/y/z/c", "a/b/c"],
      },
    ];
    for (const layout of cases) expect(compare(layout)).toEqual([]);
  });

  it("WS-7 random ignore files and paths agree with git check-ignore (seeded)", () => {
    fc.assert(
      fc.property(layoutArb, (layout) => {
        const bad = compare(layout);
        if (bad.length > 0)
          throw new Error(`${bad.join("\n")}\nlayout: ${JSON.stringify({ files: layout.files, ignores: [...layout.ignores] })}`);
      }),
      { numRuns: Number(process.env.WS_IGNORE_RUNS ?? 120), seed: Number(process.env.WS_IGNORE_SEED ?? 1307) },
    );
  }, 240_000);

  it("WS-7 a symlinked ignore file is not read (as git does not)", () => {
    const root = tempDir();
    writeFileSync(join(root, "real-ignore"), "x\n");
    mkdirSync(join(root, "s"));
    symlinkSync("../real-ignore", join(root, "s", ".gitignore"));
    writeFileSync(join(root, "s", "x"), "");
    expect(IgnoreRules.load(root).ignores("s/x", false)).toBe(false);
  });

  it("WS-8 .git (any case, any depth), the root's .strata and checkout's temporary files are always ignored, whatever the files say", () => {
    const root = tempDir();
    writeFileSync(join(root, ".gitignore"), "!.git\n!.strata\n!*\n");
    const rules = IgnoreRules.load(root);
    expect(rules.ignores(".git", true)).toBe(true);
    expect(rules.ignores(".git/config", false)).toBe(true);
    expect(rules.ignores("sub/.git", false)).toBe(true);
    expect(rules.ignores("sub/.GIT/hooks/pre-commit", false)).toBe(true);
    expect(rules.ignores(".strata/strata.db", false)).toBe(true);
    expect(rules.ignores("sub/.strata", true)).toBe(false);
    expect(rules.ignores("a/.strata-tmp-0123abcd", false)).toBe(true);
  });
});

describe("WS-7 the scan leaves out exactly what git leaves out", () => {
  it("WS-7 a baseline records exactly the files `git ls-files --others --exclude-standard` lists (seeded)", async () => {
    await fc.assert(
      fc.asyncProperty(layoutArb, async (layout) => {
        const base = tempDir("strata-ignore-");
        const ours = join(base, "ours");
        const theirs = join(base, "theirs");
        layOut(ours, layout, false);
        layOut(theirs, layout, true);
        git(theirs, ["init", "-q"]);
        const listed = git(theirs, ["ls-files", "--others", "--exclude-standard", "-z"])
          .split("\0")
          .filter((s) => s !== "");
        // git lists its own concatenated ignore files; strata's layout has the .strataignore beside them.
        const expected = new Set(listed);
        for (const [d, [, s]] of layout.ignores) {
          const p = d === "" ? ".strataignore" : `${d}/.strataignore`;
          if (s !== "" && expected.has(d === "" ? ".gitignore" : `${d}/.gitignore`) && !IgnoreRules.load(ours).ignores(p, false))
            expected.add(p);
        }
        const { session, store } = newSession();
        const capture = await new WorkspaceTracker(ours, store).baseline(session.tree);
        store.close();
        const recorded = capture.changes.map((c) => (c.type === "delete" ? c.before.path : c.entry.path));
        expect(recorded.sort()).toEqual([...expected].sort());
      }),
      { numRuns: 40, seed: 1313 },
    );
  }, 240_000);
});
