/**
 * The rule check (CI): behaviour is written as numbered rules in `docs/spec/*.md` (a definition is
 * the id in bold at the start of a rule: `**DOM-3 Fixed skeleton.**`), the laws as `**L1`…`**L8`
 * in `docs/laws.md`, and code, tests and docs cite them. `checkRules` reports
 *
 * - a citation, anywhere in the sources or the docs, of a rule or law that is not defined (a clone
 *   could not resolve it), with the file and line of the citation;
 * - a rule or law that no test cites (nothing proves it), with the file and line of its definition;
 * - a rule defined twice.
 *
 * A citation is an id of a known family — the prefixes below, and any other prefix a spec defines —
 * or `L1`…`L8`. Ranges (`DOM-7…13`, `EN-20 – EN-24`, `AG-11 … AG-13`, `L1–L8`) and lists
 * (`CLI-6/7`, `DOM-9/11–13`) count as citing every rule they name. A test citation is one in a
 * file under a `test/` directory (a test name or a comment): test modules and their helpers alike.
 *
 *   npx tsx scripts/check-rules.ts          exit 1 and one line per problem when something is wrong
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..");

/** The rule families of the specs; a citation with one of these prefixes must resolve even when the family has no rule left. */
export const PREFIXES: readonly string[] = ["DOM", "ST", "EN", "AG", "PR", "TP", "TL", "RR", "MO", "CLI", "IN"];

/** Where citations are looked for, relative to the root. */
const SOURCES = ["packages", "apps", "bench", "scripts", "docs", "fixtures/README.md", "README.md"];
const SKIP = new Set(["node_modules", "dist", ".strata", "results", "coverage"]);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|css|html)$/;

function files(path: string): string[] {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return [];
  if (st.isFile()) return TEXT.test(path) ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((f) => (SKIP.has(f) ? [] : files(join(path, f))));
}

/** One id or id expression found in a text: the ids it names, and the line it is on (1-based). */
interface Mention {
  readonly ids: readonly string[];
  readonly line: number;
  /** The mention is a definition: the expression follows `**`. */
  readonly defines: boolean;
}

const RANGE = String.raw`\s*(?:…|\.\.\.|–|—)\s*|-`;

/**
 * Every rule id expression in `text`: `P-N`, `P-W` (a named rule), followed by any number of
 * `/N`, `/P-N` (list items) and `…N`, `– P-N`, `-N` (range ends); and the laws `L1`…`L8`, alone or
 * as a range. Only ids whose prefix is in `prefixes` count.
 */
export function mentions(text: string, prefixes: ReadonlySet<string>): Mention[] {
  const out: Mention[] = [];
  const rule = new RegExp(
    String.raw`(\*\*)?\b([A-Z]{2,4})-(W|\d+)\b((?:(?:\s*\/\s*|${RANGE})(?:\2-)?\d+\b)*)|(\*\*)?\b(L[1-8])((?:${RANGE})L?[1-8])?\b`,
    "g",
  );
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    for (const m of line.matchAll(rule)) {
      if (m[6] !== undefined) {
        const a = Number(m[6].slice(1));
        const b = m[7] === undefined ? a : Number(m[7].replace(/[^0-9]/g, ""));
        const ids: string[] = [];
        for (let n = a; n <= Math.max(a, b); n++) ids.push(`L${n}`);
        out.push({ ids, line: i + 1, defines: m[5] !== undefined });
        continue;
      }
      const prefix = m[2] as string;
      if (!prefixes.has(prefix)) continue;
      const defines = m[1] !== undefined;
      if (m[3] === "W") {
        out.push({ ids: [`${prefix}-W`], line: i + 1, defines });
        continue;
      }
      const nums = [Number(m[3])];
      // The tail: a run of separators, each followed by a number (optionally with the prefix again).
      for (const t of (m[4] ?? "").matchAll(new RegExp(String.raw`(\s*\/\s*|${RANGE})(?:${prefix}-)?(\d+)`, "g"))) {
        const n = Number(t[2]);
        const last = nums[nums.length - 1] as number;
        if ((t[1] as string).includes("/")) nums.push(n);
        else for (let k = last + 1; k <= n; k++) nums.push(k);
      }
      out.push({ ids: nums.map((n) => `${prefix}-${n}`), line: i + 1, defines });
    }
  });
  return out;
}

interface Definition {
  readonly where: string;
}

/** The rules and laws a repository defines: id → `file:line` of its definition. Duplicates are problems. */
function definitions(root: string, problems: string[]): Map<string, Definition> {
  const out = new Map<string, Definition>();
  const spec = join(root, "docs", "spec");
  const sources = [
    ...(statSync(spec, { throwIfNoEntry: false })?.isDirectory()
      ? readdirSync(spec)
          .filter((f) => f.endsWith(".md"))
          .sort()
          .map((f) => join(spec, f))
      : []),
    join(root, "docs", "laws.md"),
  ];
  // Any family a spec defines is a family, whether or not it is listed in PREFIXES.
  const any = new Set<string>();
  for (const f of sources) {
    if (statSync(f, { throwIfNoEntry: false }) === undefined) continue;
    for (const m of readFileSync(f, "utf8").matchAll(/\*\*([A-Z]{2,4})-(?:W|\d+)/g)) any.add(m[1] as string);
  }
  for (const f of sources) {
    if (statSync(f, { throwIfNoEntry: false }) === undefined) continue;
    const rel = relative(root, f);
    const isLaws = rel === join("docs", "laws.md");
    readFileSync(f, "utf8")
      .split("\n")
      .forEach((line, i) => {
        // A definition opens a list item: `- **DOM-3 Fixed skeleton.** …`; a bold id elsewhere is a citation.
        if (!/^\s*[-*] \*\*/.test(line)) return;
        const first = mentions(line, any)[0];
        if (first === undefined || !first.defines) return;
        for (const id of first.ids) {
          // Laws are defined in docs/laws.md only.
          if (/^L\d$/.test(id) !== isLaws) continue;
          const where = `${rel}:${i + 1}`;
          const before = out.get(id);
          if (before !== undefined) problems.push(`${where}: defines ${id} again (first defined at ${before.where})`);
          else out.set(id, { where });
        }
      });
  }
  return out;
}

/**
 * The rule check of the repository at `root`: one line per problem, `file:line: what`, in file
 * order; empty when every citation resolves and every rule and law is cited by a test.
 */
export function checkRules(root: string = ROOT): string[] {
  const problems: string[] = [];
  const defined = definitions(root, problems);
  const prefixes = new Set([...PREFIXES, ...[...defined.keys()].filter((k) => k.includes("-")).map((k) => k.split("-")[0] as string)]);
  const tested = new Set<string>();
  for (const source of SOURCES)
    for (const f of files(join(root, source))) {
      const rel = relative(root, f);
      const isTest = rel.split("/").includes("test");
      for (const m of mentions(readFileSync(f, "utf8"), prefixes))
        for (const id of m.ids) {
          if (!defined.has(id)) {
            const home = /^L\d$/.test(id) ? "docs/laws.md" : "docs/spec/*.md";
            problems.push(`${rel}:${m.line}: cites ${id}, which ${home} does not define`);
          } else if (isTest) tested.add(id);
        }
    }
  if (![...defined.keys()].some((k) => /^L\d$/.test(k))) problems.push("docs/laws.md: defines no law (**L1** … **L8**)");
  for (const [id, d] of defined)
    if (!tested.has(id)) problems.push(`${d.where}: ${id} is cited by no test (name it in a test or a comment in a test file)`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = checkRules();
  if (problems.length > 0) {
    console.error(`rule check: ${problems.length} problem${problems.length > 1 ? "s" : ""}`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log("rules ok (every cited rule and law is defined in docs/, and each is cited by a test)");
}
