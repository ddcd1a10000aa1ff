/**
 * CLI-27 a closed stdout: `strata run … | head -3` must not end a command that is doing work. The
 * run goes on with its output dropped, records its stop, releases its lease and exits with the
 * run's own code; read commands cut short by `head` exit 0.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openStore, type SessionId } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, demoDir, json, sh, strata } from "./cli-kit.ts";

afterAll(cleanup);

/** Whether any process still holds the lease of the session's main branch (CLI-12: a row in the database). */
function held(dir: string, session: string): boolean {
  const store = openStore(join(dir, ".strata", "strata.db"), { readonly: true });
  try {
    return store.lease(session as SessionId, "main") !== undefined;
  } finally {
    store.close();
  }
}

describe("CLI-27 a reader that stops reading", () => {
  it("run | head -3: the run finishes with its output dropped, exits 0, and leaves no lease behind", async () => {
    const dir = demoDir();
    // a real pipe; bash records strata's own exit status (head's is the pipeline's)
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash array, not a template
    const r = await sh(dir, '$STRATA run --workspace ws | head -3; echo "${PIPESTATUS[0]}" > rc');
    expect(r.stdout.split("\n").filter((l) => l !== "")).toHaveLength(3);
    expect(r.stderr).not.toMatch(/EPIPE|unexpected error|\n\s+at /);
    expect(readFileSync(join(dir, "rc"), "utf8").trim()).toBe("0");
    const ls = json<{ sessions: { id: string; status: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions[0]?.status).toBe("completed-by-tool");
    expect(readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8")).toContain("## Open questions");
    expect(held(dir, ls.sessions[0]?.id as string)).toBe(false);
  }, 120_000);

  it("stdout and stderr closed together (2>&1 | head -1): the same, and read commands cut short exit 0", async () => {
    const dir = demoDir();
    const r = await sh(
      dir,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash arrays, not templates
      '$STRATA run --workspace ws 2>&1 | head -1; echo "${PIPESTATUS[0]}" > rc; $STRATA log @last --limit 0 | head -2; echo "${PIPESTATUS[0]}" > rc2',
    );
    expect(readFileSync(join(dir, "rc"), "utf8").trim()).toBe("0");
    expect(readFileSync(join(dir, "rc2"), "utf8").trim()).toBe("0");
    expect(r.stdout.split("\n").filter((l) => l !== "")).toHaveLength(3);
    const ls = json<{ sessions: { id: string; status: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions[0]?.status).toBe("completed-by-tool");
    expect(held(dir, ls.sessions[0]?.id as string)).toBe(false);
  }, 120_000);
});
