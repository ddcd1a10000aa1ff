/**
 * The rule check (scripts/check-rules.ts): on small repositories written to a temp directory it
 * passes when every citation resolves and every rule has a test, and reports — with file and line —
 * a citation of an undefined rule or law (also inside a range, and for a family with no rule left),
 * a rule or law no test cites, and a rule defined twice.
 *
 * The fixtures use the made-up family `ZZ`, and build real families' ids and the laws' names from
 * parts, so that this file cites nothing when the check runs over the real repository.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkRules, mentions } from "../check-rules.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The name of law N, written so that this file does not cite it. */
const law = (n: number): string => ["L", n].join("");
/** A rule id of a real family, written so that this file does not cite it. */
const real = (family: string, n: number): string => [family, n].join("-");

const SPEC = `# ZZ — behaviour rules

- **ZZ-1 One.** The first rule (it refines ${law(1)}).
- **ZZ-2 Two.** The second rule; see ZZ-1.
- **ZZ-4 … ZZ-5 Four and five.** Two rules in one item.
- **ZZ-6/7 Six and seven.** Two more.
`;
const LAWS = `# The laws

- **${law(1)} One authority.** The state is a function of the log.
- **${law(2)} Journal first.** A write is validated, appended, then folded.
`;
/** A test file citing every rule and law of the fixture. */
const TESTED = `/** ZZ-1, ZZ-2 and ${law(1)} */
import { it } from "vitest";
it("ZZ-4 … ZZ-5 ranges count", () => {});
it("ZZ-6/7 lists count", () => {});
// ${law(2)}: a comment counts too
`;

/** A repository with the fixture's spec and laws; `files` adds or replaces paths. */
function repo(files: Record<string, string | undefined> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "strata-rules-"));
  dirs.push(root);
  const all: Record<string, string | undefined> = {
    "docs/spec/zz.md": SPEC,
    "docs/laws.md": LAWS,
    "packages/zz/test/zz.test.ts": TESTED,
    "packages/zz/src/zz.ts": "/** What ZZ-1 says. */\nexport const x = 1;\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    if (text === undefined) continue;
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("the rule check", () => {
  it("a repository whose citations resolve and whose rules and laws are each cited by a test passes", () => {
    expect(checkRules(repo())).toEqual([]);
  });

  it("a citation of an undefined rule is reported with its file and line, wherever it is", () => {
    const root = repo({
      "packages/zz/src/zz.ts": "/** What ZZ-1 says. */\nexport const x = 1; // and ZZ-3, which nobody defined\n",
      "docs/guide.md": "# Guide\n\nSee ZZ-9.\n",
      "docs/spec/zz.md": `${SPEC}- **ZZ-8 Eight.** Like ZZ-10.\n`,
      "packages/zz/test/more.test.ts": 'it("ZZ-8", () => {});\n',
    });
    expect(checkRules(root)).toEqual([
      "packages/zz/src/zz.ts:2: cites ZZ-3, which docs/spec/*.md does not define",
      "docs/guide.md:3: cites ZZ-9, which docs/spec/*.md does not define",
      "docs/spec/zz.md:7: cites ZZ-10, which docs/spec/*.md does not define",
    ]);
  });

  it("every id a range or a list names must be defined", () => {
    const root = repo({ "packages/zz/src/zz.ts": "/** ZZ-1 … ZZ-4 and ZZ-6/7/9 */\nexport const x = 1;\n" });
    expect(checkRules(root)).toEqual([
      "packages/zz/src/zz.ts:1: cites ZZ-3, which docs/spec/*.md does not define",
      "packages/zz/src/zz.ts:1: cites ZZ-9, which docs/spec/*.md does not define",
    ]);
  });

  it("a known family resolves even when no spec defines any of its rules; a law must be in docs/laws.md", () => {
    const root = repo({
      "packages/zz/src/zz.ts": `/** ${real("RR", 9)} and ${law(5)} */\nexport const x = 1;\n`,
    });
    expect(checkRules(root)).toEqual([
      `packages/zz/src/zz.ts:1: cites ${real("RR", 9)}, which docs/spec/*.md does not define`,
      `packages/zz/src/zz.ts:1: cites ${law(5)}, which docs/laws.md does not define`,
    ]);
  });

  it("a rule or law no test cites is reported at its definition; a citation outside tests does not count", () => {
    const root = repo({
      "packages/zz/test/zz.test.ts": 'it("ZZ-1 only", () => {});\nit("ZZ-4 … ZZ-5 and ZZ-6/7", () => {});\n',
      "packages/zz/src/zz.ts": `/** ZZ-2 and ${law(1)} are cited here, outside the tests */\nexport const x = 1;\n`,
    });
    expect(checkRules(root)).toEqual([
      "docs/spec/zz.md:4: ZZ-2 is cited by no test (name it in a test or a comment in a test file)",
      `docs/laws.md:3: ${law(1)} is cited by no test (name it in a test or a comment in a test file)`,
      `docs/laws.md:4: ${law(2)} is cited by no test (name it in a test or a comment in a test file)`,
    ]);
  });

  it("a rule defined twice is reported; a bold id inside a rule's text is a citation, not a definition", () => {
    const root = repo({
      "docs/spec/more.md":
        "# More\n\n- **ZZ-2 Two again.** A second definition.\n- **ZZ-11 Eleven.** Unlike (**ZZ-1**), this one is new.\n",
      "packages/zz/test/more.test.ts": 'it("ZZ-11", () => {});\n',
    });
    expect(checkRules(root)).toEqual(["docs/spec/zz.md:4: defines ZZ-2 again (first defined at docs/spec/more.md:3)"]);
  });

  it("without docs/laws.md every cited law is undefined, and the check says no law is defined", () => {
    const problems = checkRules(repo({ "docs/laws.md": undefined }));
    expect(problems).toContain(`packages/zz/test/zz.test.ts:1: cites ${law(1)}, which docs/laws.md does not define`);
    expect(problems).toContain(`docs/laws.md: defines no law (**${law(1)}** … **${law(8)}**)`);
  });
});

describe("reading citations", () => {
  const zz = new Set(["ZZ"]);
  const ids = (text: string): string[] => mentions(text, zz).flatMap((m) => m.ids);

  it("expands ranges written with …, ..., – or — and with or without the family again, and lists", () => {
    expect(ids("ZZ-7…9")).toEqual(["ZZ-7", "ZZ-8", "ZZ-9"]);
    expect(ids("ZZ-7 ... ZZ-8, ZZ-20 – ZZ-21, ZZ-30—31")).toEqual(["ZZ-7", "ZZ-8", "ZZ-20", "ZZ-21", "ZZ-30", "ZZ-31"]);
    expect(ids("ZZ-6/7, ZZ-3/4/10–12")).toEqual(["ZZ-6", "ZZ-7", "ZZ-3", "ZZ-4", "ZZ-10", "ZZ-11", "ZZ-12"]);
    expect(ids(`${law(1)}–${law(3)} and ${law(8)}`)).toEqual([law(1), law(2), law(3), law(8)]);
  });

  it("ignores families it does not know, words that merely look like ids, and gives 1-based lines", () => {
    expect(ids("UTF-8, SHA-256, XZZ-1, ZZ-1x, L10, L9 and L1b")).toEqual([]);
    expect(mentions("a\nb ZZ-2\n", zz).map((m) => [m.ids, m.line])).toEqual([[["ZZ-2"], 2]]);
    expect(mentions("- **ZZ-2 Two.**", zz)[0]?.defines).toBe(true);
  });
});
