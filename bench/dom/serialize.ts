/**
 * Benchmark 3 — serialization throughput. No target in the issue; the figures are context, each
 * next to the raw library doing the nearest equivalent work on the same bytes in the same run:
 *
 * - `toSnapshot` / `fromSnapshot` vs `JSON.stringify` / `JSON.parse` of the same snapshot data
 *   (`fromSnapshot` also validates every record and the whole structure);
 * - `toXml` / `parseXml` vs fast-xml-parser's `XMLBuilder.build` / `XMLParser.parse` with the
 *   preserveOrder options on the same XML string (`parseXml` also pre-scans, validates with
 *   `XMLValidator` and builds the tree).
 *
 * Trees are session-shaped and sized so their canonical XML is about 1 MB and 10 MB.
 *
 * Run: npx tsx bench/run.ts serialize
 */
import { fromSnapshot, parseXml, type Tree, toSnapshot, toXml } from "@strata/dom";
import { XMLBuilder, XMLParser } from "fast-xml-parser";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  value,
} from "../lib/harness.ts";
import { sessionTree } from "../lib/session.ts";
import { bytes, interleave, num, pairedRatio, type Sample, table } from "../lib/stats.ts";

const NAME = "serialize";
export const SIZES = [
  { key: "1mb", label: "~1 MB", bytes: 1_000_000, iterations: 15 },
  { key: "10mb", label: "~10 MB", bytes: 10_000_000, iterations: 7 },
] as const;

const PARSE_OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  trimValues: false,
  parseTagValue: false,
} as const;
const BUILD_OPTIONS = { ...PARSE_OPTIONS, suppressEmptyNode: true };

export const PAIRS = [
  { key: "toSnapshot", ours: "`toSnapshot(tree)`", base: "`JSON.stringify` of the snapshot data", bytes: "snap" },
  { key: "fromSnapshot", ours: "`fromSnapshot(json)` (validates)", base: "`JSON.parse` of the snapshot", bytes: "snap" },
  { key: "toXml", ours: "`toXml(tree)`", base: "fast-xml-parser `XMLBuilder.build`", bytes: "xml" },
  { key: "parseXml", ours: "`parseXml(xml)` (pre-scan + validate + build)", base: "fast-xml-parser `XMLParser.parse`", bytes: "xml" },
] as const;

/** A session tree whose canonical XML is close to `target` bytes. */
export function treeOfXmlSize(target: number, seed: number): Tree {
  const probe = sessionTree(20_000, { seed });
  const perElement = Buffer.byteLength(toXml(probe)) / probe.size;
  return sessionTree(Math.round(target / perElement), { seed });
}

export function measure(): RunResult {
  const metrics: Record<string, Sample> = {};
  const values: Record<string, number> = {};
  const parser = new XMLParser(PARSE_OPTIONS);
  const builder = new XMLBuilder(BUILD_OPTIONS);

  for (const size of SIZES) {
    progress(NAME, `building a tree with ${size.label} of XML`);
    const tree = treeOfXmlSize(size.bytes, 23);
    const snap = toSnapshot(tree);
    const data = JSON.parse(snap) as unknown;
    const xml = toXml(tree);
    const fxp = parser.parse(xml) as unknown;
    const built = builder.build(fxp) as string;
    // Sanity: both sides handle the same content.
    if (toXml(fromSnapshot(snap)) !== xml || toXml(parseXml(xml)) !== xml) throw new Error("round trip changed the tree");
    if (Math.abs(built.length - xml.length) > xml.length * 0.05)
      throw new Error(`XMLBuilder output is ${built.length} chars, input ${xml.length}`);
    const sizes = { snap: Buffer.byteLength(snap), xml: Buffer.byteLength(xml) };
    values[`${size.key}.elements`] = tree.size;
    values[`${size.key}.snapBytes`] = sizes.snap;
    values[`${size.key}.xmlBytes`] = sizes.xml;

    const fns = {
      toSnapshot: { ours: () => toSnapshot(tree), base: () => JSON.stringify(data) },
      fromSnapshot: { ours: () => fromSnapshot(snap), base: () => JSON.parse(snap) },
      toXml: { ours: () => toXml(tree), base: () => builder.build(fxp) },
      parseXml: { ours: () => parseXml(xml), base: () => parser.parse(xml) },
    };
    for (const pair of PAIRS) {
      progress(NAME, `timing ${pair.key} at ${size.label} (interleaved with its baseline)`);
      const f = fns[pair.key];
      const s = interleave(f, { iterations: size.iterations, minSampleMs: 5, warmupMs: 300, minIterations: 5 });
      const b = sizes[pair.bytes];
      metrics[`${size.key}.${pair.key}.ours`] = s.ours;
      metrics[`${size.key}.${pair.key}.base`] = s.base;
      values[`${size.key}.${pair.key}.ours.mbs`] = b / 1000 / s.ours.median;
      values[`${size.key}.${pair.key}.base.mbs`] = b / 1000 / s.base.median;
      values[`${size.key}.${pair.key}.ratio`] = pairedRatio(s.ours, s.base);
    }
  }
  return { metrics, values };
}

export function render(agg: Aggregate): string {
  const mbs = (key: string) => value(agg, key, (x) => num(x));
  const rows = SIZES.flatMap((size) =>
    PAIRS.map((p) => [
      size.label,
      p.ours,
      cell(agg, `${size.key}.${p.key}.ours`),
      mbs(`${size.key}.${p.key}.ours.mbs`),
      p.base,
      cell(agg, `${size.key}.${p.key}.base`),
      mbs(`${size.key}.${p.key}.base.mbs`),
      ratio(agg, `${size.key}.${p.key}.ratio`),
    ]),
  );
  const sizes = SIZES.map(
    (s) =>
      `${s.label}: ${value(agg, `${s.key}.elements`)} elements, XML ${value(agg, `${s.key}.xmlBytes`, bytes)}, snapshot ${value(agg, `${s.key}.snapBytes`, bytes)}`,
  ).join("; ");
  return [
    "### 3. Snapshot and XML throughput (`bench/dom/serialize.ts`)",
    "",
    provenance(agg),
    "",
    `Session-shaped trees with their canonical XML (ids included) at about 1 MB and 10 MB — ${sizes}. MB/s is decimal megabytes of the JSON or XML string (UTF-8) per second. The baseline is the raw library on the same bytes in the same process, in interleaved rounds: \`JSON.stringify\`/\`JSON.parse\` of the same snapshot data, and fast-xml-parser 5.12.1 \`new XMLParser({preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: "", trimValues: false, parseTagValue: false}).parse(xml)\` / \`new XMLBuilder({…same, suppressEmptyNode: true}).build(parsed)\`. No target in the issue: the ratio is the price of the tree's guarantees (validation, canonical form) over the raw library.`,
    "",
    table(["size", "@strata/dom", "time", "MB/s", "baseline", "time", "MB/s", "ratio (ours / baseline)"], rows, [
      "l",
      "l",
      "r",
      "r",
      "l",
      "r",
      "r",
      "r",
    ]),
  ].join("\n");
}

export function verdicts(agg: Aggregate): string[] {
  const r = (k: string) => `${num(agg.values[k]?.median ?? Number.NaN)}×`;
  return [
    `**No target** — snapshot and XML throughput (\`serialize\`), context only; at ~10 MB vs the raw library: toSnapshot ${r("10mb.toSnapshot.ratio")}, fromSnapshot ${r("10mb.fromSnapshot.ratio")}, toXml ${r("10mb.toXml.ratio")}, parseXml ${r("10mb.parseXml.ratio")} the time.`,
  ];
}

const mod: BenchModule = { title: "serialize", measure, render, verdicts };
export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
