/**
 * The rule check (CI): behaviour is written as numbered rules in `docs/spec/*.md` (`**DOM-3 …**`),
 * laws as `L1`–`L8` in `docs/laws.md`, and code and tests cite them. This fails when a citation
 * names a rule that is not defined (a clone could not resolve it), or when a rule is cited by no
 * test (nothing proves it). Ranges (`DOM-7…13`, `EN-20–EN-24`) and lists (`CLI-6/7`) count as
 * citing every rule they name.
 *
 *   npx tsx scripts/check-rules.ts          exit 1 and a list when something is wrong
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const SPEC = join(ROOT, "docs", "spec");
const LAWS = join(ROOT, "docs", "laws.md");

/** Where citations are looked for; test citations are the ones that prove a rule. */
const SOURCES = ["packages", "apps", "bench", "scripts", "docs", "README.md"];
const SKIP = new Set(["node_modules", "dist", ".strata", "results"]);

function files(path: string): string[] {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return [];
  if (st.isFile()) return /\.(ts|mjs|md|css|html)$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((f) => (SKIP.has(f) ? [] : files(join(path, f))));
}

/** Rules defined in the spec files: `**PREFIX-N` (also `**CLI-6/7` and `**TL-11 … TL-16`, one rule per number). */
function definedRules(): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(SPEC).filter((x) => x.endsWith(".md"))) {
    const text = readFileSync(join(SPEC, f), "utf8");
    for (const m of text.matchAll(/\*\*([A-Z]{2,4})-(W|\d+)(?:\s*(?:…|–|-)\s*(?:\1-)?(\d+)|((?:\/\d+)+))?/g)) {
      const prefix = m[1] as string;
      if (m[2] === "W") {
        out.set(`${prefix}-W`, `docs/spec/${f}`);
        continue;
      }
      const a = Number(m[2]);
      const nums = [a];
      if (m[3] !== undefined) for (let n = a + 1; n <= Number(m[3]); n++) nums.push(n);
      if (m[4] !== undefined) for (const x of m[4].split("/").slice(1)) nums.push(Number(x));
      for (const n of nums) out.set(`${prefix}-${n}`, `docs/spec/${f}`);
    }
  }
  return out;
}

function definedLaws(): Set<string> {
  const out = new Set<string>();
  const text = statSync(LAWS, { throwIfNoEntry: false }) === undefined ? "" : readFileSync(LAWS, "utf8");
  for (const m of text.matchAll(/\*\*(L[1-9])\b/g)) out.add(m[1] as string);
  return out;
}

interface Citation {
  readonly id: string;
  readonly file: string;
  readonly line: number;
}

/** Every rule id a text cites, ranges and lists expanded. */
function citations(file: string, text: string, prefixes: ReadonlySet<string>): Citation[] {
  const out: Citation[] = [];
  const lines = text.split("\n");
  const pattern =
    /\b([A-Z]{2,4})-(W|\d+)(?:\s*(?:…|\.\.\.|–|—|-)\s*(?:\1-)?(\d+)|((?:\s*\/\s*(?:\1-)?\d+)+))?|\b(L[1-8])(?:\s*(?:…|–|-)\s*L?([1-8]))?\b/g;
  lines.forEach((line, i) => {
    for (const m of line.matchAll(pattern)) {
      if (m[5] !== undefined) {
        const a = Number(m[5].slice(1));
        const b = m[6] === undefined ? a : Number(m[6]);
        for (let n = a; n <= b; n++) out.push({ id: `L${n}`, file, line: i + 1 });
        continue;
      }
      const prefix = m[1] as string;
      if (!prefixes.has(prefix)) continue;
      if (m[2] === "W") {
        out.push({ id: `${prefix}-W`, file, line: i + 1 });
        continue;
      }
      const a = Number(m[2]);
      const nums = [a];
      if (m[3] !== undefined) for (let n = a + 1; n <= Number(m[3]); n++) nums.push(n);
      if (m[4] !== undefined) for (const x of m[4].split("/").slice(1)) nums.push(Number(x.replace(/[^0-9]/g, "")));
      for (const n of nums) out.push({ id: `${prefix}-${n}`, file, line: i + 1 });
    }
  });
  return out;
}

const rules = definedRules();
const laws = definedLaws();
const prefixes = new Set([...rules.keys()].map((k) => k.split("-")[0] as string));
const problems: string[] = [];
const provedBy = new Map<string, number>();

for (const root of SOURCES)
  for (const f of files(join(ROOT, root))) {
    const rel = relative(ROOT, f);
    const isTest = /\/test\//.test(rel) && /\.(test\.)?ts$/.test(rel);
    const isDefinition = rel.startsWith("docs/spec/") || rel === "docs/laws.md";
    for (const c of citations(rel, readFileSync(f, "utf8"), prefixes)) {
      const known = c.id.startsWith("L") && !c.id.includes("-") ? laws.has(c.id) : rules.has(c.id);
      if (!known && !isDefinition) problems.push(`${c.file}:${c.line}: cites ${c.id}, which no file in docs/ defines`);
      if (isTest) provedBy.set(c.id, (provedBy.get(c.id) ?? 0) + 1);
    }
  }

for (const [id, where] of rules) if (!provedBy.has(id)) problems.push(`${where}: ${id} is cited by no test`);
for (const id of laws) if (!provedBy.has(id)) problems.push(`docs/laws.md: ${id} is cited by no test`);
if (laws.size === 0) problems.push("docs/laws.md defines no law (**L1** … **L8**)");

if (problems.length > 0) {
  console.error(`rule check: ${problems.length} problem${problems.length > 1 ? "s" : ""}\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`rules ok (${rules.size} rules and ${laws.size} laws defined, each cited by a test; every citation resolves)`);
