/**
 * CLI-23: `strata export` / `strata import` through the real binary — a round trip that verifies,
 * and damaged bundles that are refused with the path of the damage, exit 1, and a database left
 * byte-for-byte as it was (EN-32 has the full table of damage, against the engine API).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, demoDir, json, strata } from "./cli-kit.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests damage bundles field by field
type Json = any;

afterAll(cleanup);

/** A damage that edits the bundle in place. */
const edit =
  (f: (b: Json) => void) =>
  (b: Json): Json => {
    f(b);
    return b;
  };

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

let dir: string;
let session: string;
let bundleText: string;
const bundle = (): Json => JSON.parse(bundleText);

beforeAll(async () => {
  dir = demoDir();
  const run = await strata(dir, ["run", "--workspace", "ws", "--json"]);
  expect(run.code, run.stderr).toBe(0);
  session = json<{ session: string }>(run).session;
  const fork = await strata(dir, ["fork", `${session}@main~3`, "--name", "try-2"]);
  expect(fork.code, fork.stderr).toBe(0);
  const exported = await strata(dir, ["export", session]);
  expect(exported.code, exported.stderr).toBe(0);
  bundleText = exported.stdout;
  // a second database with a session of its own: the import target of the damage cases
  const target = await strata(dir, ["--db", "target.db", "import", write("good.json", bundleText)]);
  expect(target.code, target.stderr).toBe(0);
}, 120_000);

function write(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return name;
}

describe("CLI-23 export / import", () => {
  it("a session with a fork round-trips into a fresh database: every head verified, digests match, verify is clean", async () => {
    const imported = await strata(dir, ["--db", "fresh.db", "import", write("b.json", bundleText), "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const r = json<Json>(imported);
    expect(r).toMatchObject({
      importedFrom: session,
      format: "strata-bundle@2",
      branchCount: 2,
      dropped: [],
      digests: true,
      verified: true,
    });
    expect(r.eventCount).toBe(bundle().events.length);
    expect(r.blobCount).toBe(Object.keys(bundle().blobs).length);
    const verify = await strata(dir, ["--db", "fresh.db", "verify", "--json"]);
    expect(json(verify)).toMatchObject({ ok: true });
    for (const branch of ["main", "try-2"]) {
      const a = await strata(dir, ["show", `${session}@${branch}`, "--xml"]);
      const b = await strata(dir, ["--db", "fresh.db", "show", `${r.session}@${branch}`, "--xml"]);
      expect(b.stdout).toBe(a.stdout);
    }
  }, 60_000);

  it("blobs nothing refers to are dropped and named on stderr", async () => {
    const b = bundle();
    const extra = Buffer.from("an unreferenced blob");
    b.blobs[createHash("sha256").update(extra).digest("hex")] = extra.toString("base64");
    const r = await strata(dir, ["--db", "dropped.db", "import", write("extra.json", JSON.stringify(b))]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/dropped 1 blob of the bundle that nothing refers to: [0-9a-f]{16}…/);
  }, 30_000);

  const E = 5;
  const cases: readonly { name: string; damage: (b: Json) => Json; says: RegExp }[] = [
    {
      name: "a timestamp of 1e300",
      damage: edit((b) => {
        b.events[E].ts = 1e300;
      }),
      says: new RegExp(`events\\[${E}\\]\\.ts: expected whole milliseconds`),
    },
    {
      name: "a blob the tree refers to, missing",
      damage: edit((b) => {
        const template = /"tag":"template","attrs":\{[^}]*"hash":"([0-9a-f]{64})"/;
        delete b.blobs[template.exec(b.events.map((e: Json) => e.data).join("\n"))?.[1] as string];
      }),
      says: /events\[\d+\]\.data: refers to blob [0-9a-f]{64} \(EN-33\)/,
    },
    {
      name: "an orphan event",
      damage: edit((b) => {
        b.events.push({ ...b.events[E], id: 999_999, prior: b.events[E - 1].id });
      }),
      says: /events\[\d+\]: event 999999 is on no branch's history/,
    },
    {
      name: "a doubled main",
      damage: edit((b) => {
        b.branches[1].name = "main";
        delete b.heads["try-2"];
      }),
      says: /branches\[1\]\.name: "main" is also/,
    },
    {
      name: "a cycle of priors",
      damage: edit((b) => {
        b.events[E].prior = b.events[E + 1].id;
        b.events[E + 1].prior = b.events[E].id;
      }),
      says: /cycle/,
    },
    {
      name: "one event's label edited (its digest no longer matches)",
      damage: edit((b) => {
        b.events[E].label = "edited";
      }),
      says: new RegExp(`events\\[${E}\\]\\.digest: does not match`),
    },
    {
      name: "__proto__ in the metadata",
      damage: (b) =>
        JSON.parse(
          JSON.stringify({ ...b, session: { ...b.session, metadata: { a: 1 } } }).replace(
            '"metadata":{',
            '"metadata":{"__proto__":{"x":1},',
          ),
        ),
      says: /session\.metadata\.__proto__/,
    },
    { name: "text that is not JSON", damage: () => "{not json", says: /it is not JSON/ },
  ];

  it.each(cases.map((c) => [c.name, c] as const))(
    "%s: exit 1, the path named, the database byte-for-byte unchanged",
    async (_, c) => {
      const target = join(dir, "target.db");
      const before = sha(target);
      const damaged = c.damage(bundle());
      const r = await strata(dir, [
        "--db",
        "target.db",
        "import",
        write("bad.json", typeof damaged === "string" ? damaged : JSON.stringify(damaged)),
      ]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/is not a valid strata bundle: /);
      expect(r.stderr).toMatch(c.says);
      expect(r.stderr).toMatch(/nothing was imported/);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(sha(target)).toBe(before);
      const verify = await strata(dir, ["--db", "target.db", "verify"]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    },
    30_000,
  );

  it("a damaged bundle does not even create the database; a missing or unreadable file is a usage error (exit 2)", async () => {
    const b = bundle();
    b.session.created = 1e300;
    const r = await strata(dir, ["--db", "never.db", "import", write("never.json", JSON.stringify(b))]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/session\.created/);
    expect(existsSync(join(dir, "never.db"))).toBe(false);
    const missing = await strata(dir, ["--db", "never.db", "import", "missing.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*missing\.json: ENOENT/);
    mkdirSync(join(dir, "a-directory"), { recursive: true });
    const directory = await strata(dir, ["--db", "never.db", "import", "a-directory"]);
    expect(directory.code).toBe(2);
    expect(existsSync(join(dir, "never.db"))).toBe(false);
  }, 30_000);
});
