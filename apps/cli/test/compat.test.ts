/**
 * The compatibility promise through the `strata` command (docs/compatibility.md; CLI-2, CLI-5,
 * CLI-8, CLI-23, CLI-30): the session fixture of every release (`fixtures/sessions/<v>.db`) reads
 * through the read commands with exit 0, every `--json` document valid against its schema, the
 * file unchanged; `export` gives back that release's bundle and `import` takes it. A database of
 * a newer schema is refused by every command, read or write, with exit 1, a message naming its
 * version and saying to upgrade, `{"error": {"code": 1, …}}` under `--json`, and its bytes
 * unchanged; a bundle of a later format is refused by `import` (exit 1, no database created); a
 * log holding an event of a kind from the future is refused by the commands that must fold it.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { openStore, type SessionId } from "@strata/store";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { ALT, cleanup, json, limited, type Result, ROOT, strata, tempDir } from "./cli-kit.ts";
import { checkVocabulary, SCHEMAS } from "./schemas.ts";

afterAll(cleanup);
const Database = createRequire(join(ROOT, "packages/store/package.json"))("better-sqlite3");
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");
const ajv = new Ajv2020({ strict: false, allErrors: true });
function valid(name: keyof typeof SCHEMAS, doc: unknown): void {
  const check = ajv.compile(SCHEMAS[name]);
  if (!check(doc)) throw new Error(`--json of ${name}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(doc, null, 2).slice(0, 2000)}`);
  expect(checkVocabulary(doc), name).toEqual([]);
}

const FIXTURES = join(ROOT, "fixtures", "sessions");
const RELEASE = "0.1.0";
const BUNDLE = join(FIXTURES, `${RELEASE}.bundle.json`);
const bundle = JSON.parse(readFileSync(BUNDLE, "utf8")) as {
  session: { id: string };
  events: unknown[];
  branches: { name: string }[];
  heads: Record<string, string>;
};
const S = bundle.session.id;

/** Every file of `dir` with the digest of its bytes. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = sha(join(dir, f));
  return out;
}

/** A copy of the release's session fixture, alone in a directory `data/` of a fresh working directory. */
function fixtureCopy(): { cwd: string; data: string; db: string } {
  const cwd = tempDir();
  const data = join(cwd, "data");
  mkdirSync(data);
  const db = join(data, "strata.db");
  copyFileSync(join(FIXTURES, `${RELEASE}.db`), db);
  return { cwd, data, db };
}

describe(`CLI-30 the ${RELEASE} session fixture reads through every read command, the file unchanged`, () => {
  it("ls, branches, log, show, prompt, replay --verify, verify, export: exit 0, valid --json; export is the release's bundle; import takes it", async () => {
    const { cwd, data, db } = fixtureCopy();
    const before = listing(data);
    const run = (args: string[]) => strata(cwd, ["--db", db, ...args]);
    const ok = (r: Result, what: string) => {
      expect(r.code, `${what}\n${r.stderr}`).toBe(0);
      return r;
    };
    const ls = json(ok(await run(["ls", "--json"]), "ls"));
    valid("ls", ls);
    expect((ls as { sessions: { id: string; outcome: string }[] }).sessions).toMatchObject([{ id: S, outcome: "completed" }]);
    const branches = json(ok(await run(["branches", S, "--json"]), "branches"));
    valid("branches", branches);
    expect((branches as { branches: { name: string }[] }).branches.map((b) => b.name).sort()).toEqual(
      bundle.branches.map((b) => b.name).sort(),
    );
    valid("log", json(ok(await run(["log", S, "--limit", "0", "--json"]), "log")));
    valid("show", json(ok(await run(["show", `${S}@alt`, "--json"]), "show --json")));
    for (const b of bundle.branches)
      expect(ok(await run(["show", `${S}@${b.name}`, "--xml"]), `show ${b.name}`).stdout.trim(), b.name).toBe(bundle.heads[b.name]);
    valid("prompt", json(ok(await run(["prompt", S, "--json"]), "prompt")));
    for (const b of bundle.branches) {
      const replay = json<{ ok: boolean; snapshotCount: number; requests: { ok: boolean; mismatchCount: number } }>(
        ok(await run(["replay", `${S}@${b.name}`, "--verify", "--json"]), `replay ${b.name}`),
      );
      valid("replay", replay);
      expect(replay, b.name).toMatchObject({ ok: true, requests: { ok: true, mismatchCount: 0 } });
    }
    const verify = json(ok(await run(["verify", "--json"]), "verify"));
    valid("verify", verify);
    expect(verify).toMatchObject({ ok: true, findings: [] });
    const exported = JSON.parse(ok(await run(["export", S]), "export").stdout);
    expect(exported).toEqual(bundle);
    expect(listing(data), "read commands write nothing and leave nothing next to the file").toEqual(before);
    // and the release's bundle imports into a new database (CLI-23)
    const imported = json<{ format: string; digests: boolean; eventCount: number }>(
      ok(await strata(cwd, ["--db", join(cwd, "copy.db"), "import", BUNDLE, "--json"]), "import"),
    );
    valid("import", imported);
    expect(imported).toMatchObject({ format: "strata-bundle@2", digests: true, eventCount: bundle.events.length });
  }, 240_000);
});

describe("CLI-5 what a newer strata wrote is refused, exit 1, the file unchanged", () => {
  it("a database of a newer schema: every command, read or write, exits 1 naming the version and saying to upgrade; nothing is written", async () => {
    const { cwd, data, db } = fixtureCopy();
    const raw = new Database(db);
    raw.pragma("user_version = 99");
    raw.close();
    mkdirSync(join(cwd, "ws"));
    const before = listing(data);
    expect(Object.keys(before)).toEqual(["strata.db"]);
    const commands = [
      ["ls"],
      ["log", S],
      ["show", S],
      ["branches", S],
      ["prompt", S],
      ["replay", S, "--verify"],
      ["verify"],
      ["export", S],
      ["serve", "--port", "0"],
      ["import", BUNDLE],
      ["run", "a task", "--model", ALT, "--workspace", "ws"],
      ["resume", S],
      ["fork", `${S}@3`, "--name", "newer"],
      ["rewind", S, "--to", "3"],
    ];
    const message =
      /\/strata\.db uses store schema version 99, newer than this strata reads \(\d+\)\. It was not changed; upgrade strata to open it\./;
    const results = await limited(
      4,
      // `export` prints the bundle itself: --json does not apply to it (exit 2, a usage error)
      commands.flatMap((c) => [
        () => strata(cwd, ["--db", db, ...c]),
        () => strata(cwd, ["--db", db, ...c, ...(c[0] === "export" ? [] : ["--json"])]),
      ]),
    );
    for (const [i, r] of results.entries()) {
      const c = (commands[i >> 1] as string[]).join(" ");
      expect(r.code, `${c}\n${r.stderr}`).toBe(1);
      expect(r.stderr, c).toMatch(message);
      if (i % 2 === 0 || c.startsWith("export")) expect(r.stdout, `${c}: nothing on stdout`).toBe("");
      else {
        const doc = json<{ error: { code: number; message: string } }>(r);
        valid("error", doc);
        expect(doc.error.code, c).toBe(1);
        expect(doc.error.message, c).toMatch(message);
      }
    }
    expect(listing(data), "the file's bytes, and no -wal or -shm").toEqual(before);
  }, 240_000);

  it("a bundle of a later format: import exits 1 naming the format and saying to upgrade; no database is created", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "future.json"), JSON.stringify({ ...bundle, format: "strata-bundle@3" }));
    const db = join(cwd, "new.db");
    for (const extra of [[], ["--json"]]) {
      const r = await strata(cwd, ["--db", db, "import", "future.json", ...extra]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /future\.json is not a valid strata bundle: format: is "strata-bundle@3"; this strata reads "strata-bundle@2" and "strata-bundle@1"; a newer strata wrote it: upgrade strata to import it; nothing was imported/,
      );
      if (extra.length > 0) expect(json<{ error: { code: number } }>(r).error.code).toBe(1);
    }
    expect(existsSync(db), "not even created (CLI-23)").toBe(false);
  }, 60_000);

  it("a log holding an event of a kind from the future (foo@1): commands that fold it exit 1 naming the kind and saying to upgrade; log marks it; the log is never written", async () => {
    const { cwd, data, db } = fixtureCopy();
    const store = openStore(db);
    const head = store.branch(S as SessionId, "main")?.head as number;
    const [future] = store.append(S as SessionId, "main", head as never, [{ kind: "foo@1", label: "future", data: '{"ops":[]}' }]);
    store.close();
    /** The log as the store reads it: every branch and its chain. */
    const history = () => {
      const s = openStore(db, { readonly: true });
      const out = s.branches(S as SessionId).map((b) => [b.name, b.head, s.chainMeta(b.head).map((e) => [e.id, e.kind, e.digest])]);
      s.close();
      return out;
    };
    const log0 = history();
    const before = listing(data);
    const inner = `event ${future?.id} has kind "foo@1", which this strata does not know (it knows genesis@1, patch@1); it may have been written by a newer version of strata: upgrade strata to read it`;
    const check = (r: Result, c: string) => {
      expect(r.code, `${c}\n${r.stderr}`).toBe(1);
      expect(r.stdout + r.stderr, c).toContain(inner);
      expect(r.stderr, c).not.toMatch(/unexpected error|\n\s+at /);
      // a file a newer strata wrote is not damaged: no advice to restore it from a copy
      if (c !== "verify") expect(r.stderr, c).not.toMatch(/is damaged|restore the file/);
    };
    const reads = [["show", S], ["prompt", S], ["replay", S, "--verify"], ["export", S], ["verify"]];
    const results = await limited(
      3,
      reads.map((c) => () => strata(cwd, ["--db", db, ...c])),
    );
    for (const [i, r] of results.entries()) check(r, (reads[i] as string[]).join(" "));
    // log reads the index: it lists the event, marked unreadable with the same words, and exits 0
    const log = await strata(cwd, ["--db", db, "log", S]);
    expect(log.code).toBe(0);
    expect(log.stdout).toMatch(new RegExp(`^\\s+${future?.id} .* future +\\(unreadable — .*"foo@1".*upgrade strata to read it\\)$`, "m"));
    // the other branches still read; ls lists the session and exits 1 (CLI-13: a head it cannot read)
    expect((await strata(cwd, ["--db", db, "show", `${S}@alt`, "--xml"])).stdout.trim()).toBe(bundle.heads.alt);
    const ls = await strata(cwd, ["--db", db, "ls", "--json"]);
    expect(ls.code).toBe(1);
    expect(json<{ sessions: { id: string }[] }>(ls).sessions.map((x) => x.id)).toEqual([S]);
    expect(listing(data), "read commands: the file's bytes").toEqual(before);
    // resume takes the branch's lease before it reads the head (CLI-11, CLI-12): it fails the same
    // way and releases the lease; the log — events, heads, digests — is unchanged
    check(await strata(cwd, ["--db", db, "resume", S]), "resume");
    expect(history()).toEqual(log0);
    const after = openStore(db, { readonly: true });
    expect(after.lease(S as SessionId, "main"), "released: no holder").toBeUndefined();
    after.close();
  }, 120_000);
});
