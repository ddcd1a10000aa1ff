/**
 * IN-24 the unified diff, checked against GNU diffutils: `patch` turns the old text into the new
 * with it, and it has as many `+`/`-` lines as `diff --minimal` (both are minimal edit scripts).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { headerPath, unifiedDiff } from "../src/workspace/unified.ts";

const scratch = mkdtempSync(join(tmpdir(), "strata-agent-unified-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `patch` applied to `before` (as file `f`): the result. */
function applied(before: string, unified: string): string {
  writeFileSync(join(scratch, "f"), before);
  execFileSync("patch", ["-s", "-p1", "-d", scratch], { input: unified });
  return readFileSync(join(scratch, "f"), "utf8");
}

/** Changed lines GNU diff counts with `--minimal`. */
function gnuChanged(a: string, b: string): number {
  writeFileSync(join(scratch, "a"), a);
  writeFileSync(join(scratch, "b"), b);
  const r = spawnSync("diff", ["--minimal", "-U0", join(scratch, "a"), join(scratch, "b")], { encoding: "utf8" });
  return r.stdout.split("\n").filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l)).length;
}

/** Texts over a small alphabet of lines, so that equal lines recur (the hard case for a diff). */
const text = fc
  .tuple(fc.array(fc.constantFrom("a", "b", "c", "d", "", "  x", "\tz"), { maxLength: 30 }), fc.boolean())
  .map(([lines, eol]) => (lines.length === 0 ? "" : lines.join("\n") + (eol ? "\n" : "")));

describe("IN-24 unified diff", () => {
  it("is the format diff -u writes: hunks with 3 lines of context, ranges, no-newline markers", () => {
    const a = `${Array.from({ length: 15 }, (_, i) => i + 1).join("\n")}\n`;
    const b = a.replace("3\n", "X\n").replace("13\n", "Y\n");
    expect(unifiedDiff(a, b, "a/f", "b/f").text).toBe(
      [
        "--- a/f",
        "+++ b/f",
        "@@ -1,6 +1,6 @@",
        " 1",
        " 2",
        "-3",
        "+X",
        " 4",
        " 5",
        " 6",
        "@@ -10,6 +10,6 @@",
        " 10",
        " 11",
        " 12",
        "-13",
        "+Y",
        " 14",
        " 15",
        "",
      ].join("\n"),
    );
    expect(unifiedDiff("x\ny", "x\ny\n", "a/f", "b/f").text).toBe(
      ["--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", " x", "-y", "\\ No newline at end of file", "+y", ""].join("\n"),
    );
    expect(unifiedDiff("", "one\n", "/dev/null", "b/f").text).toBe("--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+one\n");
    expect(unifiedDiff("one\ntwo\n", "", "a/f", "/dev/null").text).toBe("--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n");
    expect(unifiedDiff("same\n", "same\n", "a/f", "b/f")).toEqual({ text: "", added: 0, removed: 0, coarse: false });
  });

  it("patch applies it, and it is as short as diff --minimal's (random texts of recurring lines)", () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const u = unifiedDiff(a, b, "a/f", "b/f");
        expect(u.coarse).toBe(false);
        if (a !== b) expect(applied(a, u.text)).toBe(b);
        expect(u.added + u.removed).toBe(gnuChanged(a, b));
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("is bounded: past maxEdits (or maxWork) the middle is a replacement, still a correct patch", () => {
    const a = `${Array.from({ length: 400 }, (_, i) => `line ${i}`).join("\n")}\n`;
    const b = a.replace(/line (\d*[02468])\n/g, "even $1\n");
    const fine = unifiedDiff(a, b, "a/f", "b/f");
    expect({ coarse: fine.coarse, added: fine.added, removed: fine.removed }).toEqual({ coarse: false, added: 200, removed: 200 });
    for (const options of [{ maxEdits: 100 }, { maxWork: 10_000 }]) {
      const coarse = unifiedDiff(a, b, "a/f", "b/f", options);
      expect(coarse.coarse).toBe(true);
      expect(coarse.added).toBe(coarse.removed);
      expect(applied(a, coarse.text)).toBe(b);
    }
  });

  it("a large, wholly different pair of texts is answered within the work bound", () => {
    const a = `${Array.from({ length: 200_000 }, (_, i) => `a${i}`).join("\n")}\n`;
    const b = `${Array.from({ length: 200_000 }, (_, i) => `b${i}`).join("\n")}\n`;
    const u = unifiedDiff(a, b, "a/f", "b/f");
    expect({ coarse: u.coarse, added: u.added, removed: u.removed }).toEqual({ coarse: true, added: 200_000, removed: 200_000 });
  }, 30_000);

  it("paths in headers are written as git writes them: a tab after a name with a space, C quotes for control characters", () => {
    expect(headerPath("a/", "src/x.ts")).toBe("a/src/x.ts");
    expect(headerPath("a/", "a file.md")).toBe("a/a file.md\t");
    expect(headerPath("b/", 'we"ird\tname\n')).toBe('"b/we\\"ird\\tname\\n"');
    expect(headerPath("b/", "bell\u0007")).toBe('"b/bell\\007"');
    // patch reads both back
    writeFileSync(join(scratch, "a file.md"), "one\n");
    execFileSync("patch", ["-s", "-p1", "-d", scratch], {
      input: unifiedDiff("one\n", "two\n", headerPath("a/", "a file.md"), headerPath("b/", "a file.md")).text,
    });
    expect(readFileSync(join(scratch, "a file.md"), "utf8")).toBe("two\n");
    writeFileSync(join(scratch, "tab\there"), "one\n");
    execFileSync("patch", ["-s", "-p1", "-d", scratch], {
      input: unifiedDiff("one\n", "two\n", headerPath("a/", "tab\there"), headerPath("b/", "tab\there")).text,
    });
    expect(readFileSync(join(scratch, "tab\there"), "utf8")).toBe("two\n");
  });
});
