/**
 * The compatibility promise for request records (docs/compatibility.md; PR-15, PR-16, decision
 * 0017): in the session fixture of every release (`fixtures/sessions/<v>.db`, written by that
 * release's `strata`), every turn's `<request>` record (`strata-request@1`) is read by this build
 * and the request it re-renders from the recorded inputs — template, context files, tool roster,
 * settings — is the one that was sent, on every branch; read-only, nothing written.
 */
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { openStore, type SessionId } from "@strata/store";
import { describe, expect, it } from "vitest";
import { renderPrompt, verifyRequests } from "../src/index.ts";
import { tempDir } from "./agent-kit.ts";

const FIXTURES = join(import.meta.dirname, "../../../fixtures/sessions");
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("the request records of every release's session fixture verify with this build", () => {
  const releases = readdirSync(FIXTURES).filter((f) => f.endsWith(".db"));
  it("there is a fixture to read", () => expect(releases).toContain("0.1.0.db"));

  for (const name of releases)
    it(`${name}: every recorded request on every branch re-renders to what was sent; the prompt at each head renders`, () => {
      const path = join(tempDir(), name);
      copyFileSync(join(FIXTURES, name), path);
      const before = sha(path);
      const store = openStore(path, { readonly: true });
      const id = store.listSessions()[0]?.id as SessionId;
      let verified = 0;
      for (const b of store.branches(id)) {
        const s = Session.open(store, id, { branch: b.name }).session;
        const report = verifyRequests(s);
        expect(report, b.name).toMatchObject({ ok: true, unrecorded: 0, mismatched: 0, mismatches: [] });
        expect(report.verified, b.name).toBe(report.turns);
        verified += report.verified;
        const prompt = renderPrompt(s);
        expect(prompt.system.length, b.name).toBeGreaterThan(0);
        expect(prompt.messages.length, b.name).toBeGreaterThan(0);
        s.close();
      }
      expect(verified, "the fixture records requests").toBeGreaterThan(10);
      store.close();
      expect(sha(path), "read-only: nothing written").toBe(before);
    });
});
