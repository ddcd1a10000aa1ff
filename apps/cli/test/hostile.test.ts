/**
 * CLI-26 every string from a session is made safe before it reaches a terminal: labels, titles,
 * causes, text, attribute values, tool output and the errors that quote them — through every
 * command. Hostile strings carry an OSC 52 clipboard write, a screen clear, 8-bit C1 controls,
 * bidi overrides and a bare CR. `--json` (and the bundle `export` writes) stays exact.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { encodePatch, PATCH_KIND } from "@strata/engine/internal";
import { openStore } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTerminalSafe, jsonText, terminalSafe } from "../src/terminal.ts";
import { cleanup, demoDir, json, limited, type Result, script, strata } from "./cli-kit.ts";

afterAll(cleanup);

const OSC52 = "\x1b]52;c;SGVsbG8=\x07";
const CLEAR = "\x1b[2J\x1b[H";
const C1 = "\u009b2J\u009d52;c;eA==\u009c";
const BIDI = "abc\u202eevil\u2066x\u2069";
const CR = "safe\rEVIL";
/** What XML can carry (no C0 controls but CR): tree text and attribute values. */
const IN_TREE = `${C1} ${BIDI} ${CR}`;
/** What event metadata can carry: anything. */
const ANYWHERE = `${OSC52}${CLEAR}${IN_TREE}`;
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function terminalClean(r: Result, what: string): void {
  for (const [name, text] of [
    ["stdout", r.stdout],
    ["stderr", r.stderr],
  ] as const) {
    const bad = UNSAFE.exec(text);
    expect(
      bad,
      `${what}: ${name} has U+${bad?.[0].charCodeAt(0).toString(16)} near ${JSON.stringify(text.slice(Math.max(0, (bad?.index ?? 0) - 30), (bad?.index ?? 0) + 10))}`,
    ).toBeNull();
  }
}

let dir = "";
let db = "";
let handle = "";
let id = "";
beforeAll(async () => {
  dir = demoDir();
  // a run whose model text and tool output are hostile
  const model = script(dir, "hostile", [
    {
      text: `Look: ${ANYWHERE}`,
      toolCalls: [
        { name: "run", arguments: { command: "printf '\\033]52;c;SGVsbG8=\\007\\302\\2332J \\342\\200\\256rtl\\r!\\n'; sleep 0.3" } },
      ],
    },
    { text: `Done ${ANYWHERE}` },
  ]);
  const r = await strata(dir, ["run", `task ${ANYWHERE}`, "--model", model, "--workspace", "ws", "--title", `title ${ANYWHERE}`, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  ({ handle, session: id } = json<{ handle: string; session: string }>(r));
  // events as a bundle from elsewhere could carry them: hostile labels and causes (the engine
  // writes one-line labels only, so they are appended below it, as an importer would), text and
  // attribute values
  db = join(dir, ".strata", "strata.db");
  const store = openStore(db);
  const { session } = Session.open(store, id as never, { branch: "main" });
  session.commit([["ins", nodeId(3), null, { tag: "note", attrs: { x: IN_TREE }, text: IN_TREE }]], { label: "note" });
  const head = store.branch(id as never, "main")?.head as never;
  store.append(id as never, "main", head, [
    { kind: PATCH_KIND, label: `label ${ANYWHERE}`, by: `by ${ANYWHERE}`, data: encodePatch([["set", nodeId(3), "x", IN_TREE]]) },
    { kind: PATCH_KIND, label: ANYWHERE, data: encodePatch([["set", nodeId(3), "y", IN_TREE]]) },
  ]);
  store.close();
  // a second session with a hostile title, for an error that lists candidates
  const again = await strata(dir, ["run", "other", "--model", model, "--workspace", "ws", "--title", `other ${ANYWHERE}`, "-q"]);
  expect(again.code, again.stderr).toBe(0);
}, 120_000);

describe("CLI-26 terminal-safe output", () => {
  it("terminalSafe shows every control as a symbol, keeps line feeds and tabs, and is idempotent", () => {
    const s = terminalSafe(`a\tb\n${ANYWHERE}\r\n`);
    expect(UNSAFE.test(s)).toBe(false);
    expect(s).toContain("a\tb\n");
    expect(s).toContain("␛]52;c;SGVsbG8=␇");
    expect(s).toContain("\\x9b2J");
    expect(s).toContain("\\u202e");
    expect(s).toContain("safe␍EVIL");
    expect(s.endsWith("\n")).toBe(true);
    expect(terminalSafe(s)).toBe(s);
    expect(isTerminalSafe(s)).toBe(true);
    expect(JSON.parse(jsonText({ v: ANYWHERE }))).toEqual({ v: ANYWHERE });
    expect(UNSAFE.test(jsonText({ v: ANYWHERE }))).toBe(false);
  });

  it("no command prints a session's hostile strings raw", async () => {
    const events = json<{ events: { id: number }[] }>(await strata(dir, ["log", handle, "--limit", "0", "--json"])).events;
    const first = events[4]?.id as number;
    const commands = [
      ["ls"],
      ["ls", "--all"],
      ["log", handle, "--limit", "0"],
      ["show", handle],
      ["show", handle, "--xml"],
      ["show", handle, "--select", "note"],
      ["diff", `${handle}@${first}`, `${handle}@main`],
      ["branches", handle],
      ["prompt", handle],
      ["prompt", handle, "--at", String(first), "--diff", "~0"],
      ["bisect", handle, "--until", "body[y]"],
      ["replay", handle, "--verify"],
      ["verify"],
      ["resume", handle],
      ["log", "01"],
      ["fork", `${handle}@${first}`, "--name", "f"],
      ["rewind", `${handle}@f`, "--to", "~1"],
    ];
    const rs = await limited(
      3,
      commands.map((c) => () => strata(dir, c)),
    );
    for (const [i, r] of rs.entries()) {
      const what = commands[i]?.join(" ") as string;
      expect(r.stderr, what).not.toMatch(/unexpected error/);
      terminalClean(r, what);
    }
    // the hostile strings were there to be shown
    expect(rs[2]?.stdout).toContain("label ␛]52;c;SGVsbG8=␇␛[2J␛[H");
    expect(rs[0]?.stdout).toContain("title ␛]52");
    expect(rs[14]?.stderr).toMatch(/matches 2 sessions/);
    expect(rs[14]?.stderr).toContain("other ␛]52");
  }, 300_000);

  it("a run's live transcript and tool output are safe; --json and export stay exact", async () => {
    // a script answers by the number of assistant messages so far: two were played already
    const model = script(dir, "hostile2", [
      { text: "(first)" },
      { text: "(second)" },
      { text: `Again ${ANYWHERE}`, toolCalls: [{ name: "run", arguments: { command: "printf '\\033[2J\\302\\233x\\n'" } }] },
      { text: "Done." },
    ]);
    const r = await strata(dir, ["run", "more", "--session", handle, "--model", model]);
    expect(r.code, r.stderr).toBe(0);
    terminalClean(r, "run --session");
    expect(r.stdout).toContain("Again ␛]52;c;SGVsbG8=␇");
    const log = json<{ events: { label: string | null; by: string | null }[] }>(
      await strata(dir, ["log", handle, "--limit", "0", "--json"]),
    );
    expect(log.events.map((e) => e.label)).toContain(ANYWHERE);
    expect(log.events.map((e) => e.by)).toContain(`by ${ANYWHERE}`);
    const ls = json<{ sessions: { title: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions.map((s) => s.title)).toContain(`title ${ANYWHERE}`);
    const show = await strata(dir, ["show", handle, "--select", "note[x]", "--json"]);
    expect(UNSAFE.test(show.stdout)).toBe(false);
    expect(json<{ elements: { text?: string; attrs: Record<string, string> }[] }>(show).elements[0]).toMatchObject({
      text: IN_TREE,
      attrs: { x: IN_TREE },
    });
    const exported = await strata(dir, ["export", handle]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(UNSAFE.test(exported.stdout)).toBe(false);
    writeFileSync(join(dir, "bundle.json"), exported.stdout);
    const imported = await strata(dir, ["--db", "copy.db", "import", "bundle.json"]);
    expect(imported.code, imported.stderr).toBe(0);
    terminalClean(imported, "import");
    const copy = json<{ sessions: { id: string }[] }>(await strata(dir, ["--db", "copy.db", "ls", "--json"])).sessions[0]?.id as string;
    const labels = json<{ events: { label: string | null }[] }>(
      await strata(dir, ["--db", "copy.db", "log", copy, "--limit", "0", "--json"]),
    );
    expect(labels.events.map((e) => e.label)).toContain(ANYWHERE);
    expect(readFileSync(join(dir, "bundle.json"), "utf8")).toContain("\\u001b]52");
  }, 300_000);
});
