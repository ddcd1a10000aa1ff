/**
 * TP-23 with a real memory bound: the doubling templates of issue 11 item 22 run in a child
 * process whose V8 heap is capped at 160 MB. Before the fix the list doubling crashed the process
 * (V8 out of memory) and the string doubling threw a raw RangeError; now each is a TemplateError
 * with code `limit`, and the process's peak memory grows by a modest amount.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CHILD = join(import.meta.dirname, "template-child.ts");
const NAMES = [
  "list-doubling",
  "string-doubling",
  "string-plus-doubling",
  "self-nesting-json",
  "wide-join",
  "upper-of-huge",
  "indent-of-huge",
];

describe("TP-23 memory stays bounded", () => {
  it("TP-23 the 24-doubling and string-doubling templates end in a limit TemplateError inside a 160 MB heap", { timeout: 120_000 }, () => {
    const r = spawnSync(process.execPath, ["--max-old-space-size=160", "--import", "tsx", CHILD, ...NAMES], {
      encoding: "utf8",
      timeout: 100_000,
    });
    expect(r.stderr).not.toMatch(/heap out of memory|FATAL/);
    expect(r.status, r.stderr).toBe(0);
    const out = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const results = new Map(out.filter((o) => "name" in o).map((o) => [o.name, o]));
    for (const name of NAMES) expect(results.get(name), name).toMatchObject({ code: "limit" });
    expect(results.get("list-doubling")).toMatchObject({ limit: "list-length", line: 15 });
    expect(results.get("string-doubling")).toMatchObject({ limit: "string-length" });
    expect(results.get("string-doubling")?.message).toMatch(
      /^string-doubling:\d+:\d+: the joined string \(~\) would be \d+ characters long/,
    );
    // The peak resident memory grew by well under the heap cap: the limits stopped each template
    // long before its values were large (64 MB of allocation at most, in a render).
    const peak = out.find((o) => "peakRssGrowthKb" in o)?.peakRssGrowthKb as number;
    expect(peak).toBeLessThan(128 * 1024);
  });
});
