/**
 * CLI-29 paths a session recorded are data from elsewhere. A bundle whose recorded template is an
 * absolute path on the importer's machine, or whose context files lead out of the workspace
 * (`../../secrets/…`, a symlink), makes `resume` read none of them: the recorded copies are used,
 * a note says what was not re-read, and nothing of the outside files reaches the database.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordInputs } from "@strata/agent";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, json, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

const SECRET_TEMPLATE = "TOP-SECRET-TEMPLATE";
const SECRET_CONTEXT = "TOP-SECRET-CONTEXT";

describe("CLI-29 recorded paths are not followed out of the workspace", () => {
  it("an imported session's recorded template path and outside context files are not read on resume", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "secrets"));
    writeFileSync(join(dir, "secrets", "x"), `${SECRET_TEMPLATE} {{ 1 }}`);
    writeFileSync(join(dir, "secrets", "ctx.txt"), SECRET_CONTEXT);
    const ws = join(dir, "a", "b");
    mkdirSync(ws, { recursive: true });
    symlinkSync(join(dir, "secrets", "ctx.txt"), join(ws, "link.txt"));
    writeFileSync(join(ws, "inside.txt"), "inside, current");
    // the attacker's session, as their bundle would carry it
    const src = join(dir, "attacker.db");
    const store = openStore(src, { create: true });
    const s = Session.create(store, { title: "innocent" });
    recordInputs(s, {
      templates: { system: "RECORDED TEMPLATE COPY" },
      context: { "../../secrets/ctx.txt": "RECORDED CTX COPY", "link.txt": "RECORDED LINK COPY", "inside.txt": "inside, recorded" },
      model: { provider: "scripted", model: "m" },
      settings: {
        workspace: "/home/victim",
        "model-spec": "scripted:/home/victim/m.json",
        "template-file": join(dir, "secrets", "x"),
        "max-steps": 5,
      },
    });
    s.commit([["ins", nodeId(3), null, { tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: "summarize" }] }]], {
      label: "turn.user",
    });
    store.close();
    const exported = await strata(dir, ["--db", src, "export", s.id]);
    expect(exported.code, exported.stderr).toBe(0);
    writeFileSync(join(dir, "bundle.json"), exported.stdout);
    const imported = await strata(dir, ["--db", "mine.db", "import", "bundle.json", "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const copy = json<{ session: string }>(imported).session;
    const model = script(dir, "m", [{ text: "Nothing to add." }]);
    const r = await strata(dir, ["--db", "mine.db", "resume", copy, "--workspace", ws, "--model", model]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the template path .*secrets\/x was recorded on the machine this session was imported from: not read/);
    expect(r.stderr).toMatch(
      /the context file "\.\.\/\.\.\/secrets\/ctx\.txt" recorded in the session leads outside the workspace .*: not read/,
    );
    expect(r.stderr).toMatch(/the context file "link\.txt" recorded in the session leads outside the workspace .*: not read/);
    const db = readFileSync(join(dir, "mine.db")).toString("latin1");
    expect(db).not.toContain(SECRET_TEMPLATE);
    expect(db).not.toContain(SECRET_CONTEXT);
    // a file inside the workspace is re-read, and its change recorded
    expect(db).toContain("inside, current");
    const prompt = json<{ request: { system: string } }>(await strata(dir, ["--db", "mine.db", "prompt", copy, "--json"]));
    expect(prompt.request.system).toContain("RECORDED TEMPLATE COPY");
  }, 120_000);

  it("a context file named on the command line must be inside the workspace, symlinks resolved", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    writeFileSync(join(dir, "secret.txt"), SECRET_CONTEXT);
    symlinkSync(join(dir, "secret.txt"), join(dir, "ws", "link.txt"));
    const model = script(dir, "m", [{ text: "ok" }]);
    for (const c of ["../secret.txt", "link.txt", join(dir, "secret.txt")]) {
      const r = await strata(dir, ["run", "t", "--model", model, "--workspace", "ws", "--context", c]);
      expect(r.code, c).toBe(2);
      expect(r.stderr).toMatch(/is outside the workspace .*; context files must be inside it/);
    }
  }, 120_000);
});

describe("CLI-29 a branch's name never leads its working directory out of the database's", () => {
  it("fork --name with a '..' (or '.', or empty) part is refused before anything is written; the store refuses it too", async () => {
    const dir = tempDir();
    const model = script(dir, "m", [{ text: "Hello." }]);
    expect((await strata(dir, ["chat", "--model", model], { input: "hi\n" })).code).toBe(0);
    for (const name of ["a/../../../../escape", "a/./b", "a//b", "a/", "x/.."]) {
      const r = await strata(dir, ["fork", "@last@3", "--name", name]);
      expect(r.code, name).toBe(2);
      expect(r.stderr).toMatch(/is not a branch name: .*no empty, "\." or "\.\." part between slashes/);
    }
    // the same names through the store's API: bad-input, nothing written
    const store = openStore(join(dir, ".strata", "strata.db"));
    const [s] = store.listSessions();
    const before = store.branches(s?.id as never).length;
    expect(() => store.fork(s?.id as never, 3 as never, "a/../b")).toThrow(/no empty, "\." or "\.\." part between slashes/);
    expect(store.branches(s?.id as never)).toHaveLength(before);
    store.close();
    // a fine name with slashes and dots still works
    expect((await strata(dir, ["fork", "@last@3", "--name", "try/v1.2"])).code).toBe(0);
  }, 120_000);
});
