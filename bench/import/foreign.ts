/**
 * Importing a foreign session (issue 18): a generated 10,000-line Claude Code session file —
 * prompts, responses split over several lines (text, thinking, parallel tool calls), tool results
 * of a few hundred to a few thousand characters, progress and snapshot bookkeeping — imported with
 * `importForeign` into a fresh SQLite store, against the baseline measured in the same rounds:
 * reading the same file and `JSON.parse` of every line. Rounds interleave the two; the ratio is per
 * round. Target: ≤ 2×.
 *
 * Run: npx tsx bench/run.ts foreign
 * Knobs: BENCH_ROUNDS (default 7), BENCH_LINES (default 10000).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importForeign } from "@strata/import";
import { openStore } from "@strata/store";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  med,
  progress,
  provenance,
  type RunResult,
  runAsScript,
  targetLine,
} from "../lib/harness.ts";
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "foreign";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const LINES = Number(process.env.BENCH_LINES ?? 10_000);

/** A deterministic pseudo-random sequence (the file is the same every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = "the session store keeps every event in order and a branch is a head pointer over the log of patches".split(" ");

function prose(next: () => number, chars: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = WORDS[Math.floor(next() * WORDS.length)] as string;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(" ");
}

/** A Claude Code 2.x session file of `lines` lines, shaped like real ones. */
export function claudeCodeSession(lines: number): string {
  const next = rng(18);
  const session = "0b0c7c8e-5d3a-4f4e-9a59-7d0c2d1f0e18";
  const out: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const t0 = Date.parse("2026-03-01T09:00:00.000Z");
  const uuid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const env = (type: string, extra: Record<string, unknown>) => {
    const id = uuid();
    const line = {
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd: "/home/me/proj",
      sessionId: session,
      version: "2.0.28",
      gitBranch: "main",
      type,
      ...extra,
      uuid: id,
      timestamp: new Date(t0 + n * 900).toISOString(),
    };
    parent = id;
    out.push(JSON.stringify(line));
  };
  let msg = 0;
  while (out.length < lines) {
    env("user", { message: { role: "user", content: prose(next, 80 + Math.floor(next() * 300)) } });
    for (let step = 0; step < 4 && out.length < lines; step++) {
      const id = `msg_${String(++msg).padStart(20, "0")}`;
      const usage = {
        input_tokens: 3 + Math.floor(next() * 100),
        cache_creation_input_tokens: Math.floor(next() * 5000),
        cache_read_input_tokens: Math.floor(next() * 50000),
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: Math.floor(next() * 800),
        service_tier: "standard",
      };
      const message = (content: unknown[]) => ({
        model: "claude-sonnet-4-5-20250929",
        id,
        type: "message",
        role: "assistant",
        content,
        stop_reason: null,
        stop_sequence: null,
        usage,
      });
      env("assistant", {
        requestId: `req_${msg}`,
        message: message([{ type: "thinking", thinking: prose(next, 200), signature: "EqoBCkYI".repeat(20) }]),
      });
      env("assistant", { requestId: `req_${msg}`, message: message([{ type: "text", text: prose(next, 120) }]) });
      const calls = 1 + Math.floor(next() * 2);
      const ids: string[] = [];
      for (let c = 0; c < calls; c++) {
        const call = `toolu_${msg}_${c}`;
        ids.push(call);
        env("assistant", {
          requestId: `req_${msg}`,
          message: message([
            { type: "tool_use", id: call, name: c === 0 ? "Read" : "Bash", input: { file_path: `/home/me/proj/src/f${c}.ts` } },
          ]),
        });
      }
      if (next() < 0.3)
        out.push(
          JSON.stringify({
            type: "file-history-snapshot",
            messageId: id,
            snapshot: { messageId: id, trackedFileBackups: {}, timestamp: new Date(t0).toISOString() },
            isSnapshotUpdate: false,
          }),
        );
      for (const call of ids) {
        const output = prose(next, 300 + Math.floor(next() * 3000));
        env("user", {
          message: { role: "user", content: [{ tool_use_id: call, type: "tool_result", content: output }] },
          toolUseResult: {
            type: "text",
            file: { filePath: "/home/me/proj/src/f.ts", content: output, numLines: 40, startLine: 1, totalLines: 40 },
          },
        });
      }
    }
    env("assistant", {
      message: {
        model: "claude-sonnet-4-5-20250929",
        id: `msg_${++msg}`,
        type: "message",
        role: "assistant",
        content: [{ type: "text", text: prose(next, 400) }],
        stop_reason: "end_turn",
        usage: { input_tokens: 10, output_tokens: 90 },
      },
    });
  }
  return `${out.slice(0, lines).join("\n")}\n`;
}

/** The baseline: the file read, and every line given to `JSON.parse`. */
function parseLines(file: string): number {
  const text = readFileSync(file, "utf8");
  let n = 0;
  for (const line of text.split("\n")) if (line !== "") n += JSON.parse(line) === null ? 0 : 1;
  return n;
}

const mod: BenchModule = {
  title: "Importing a 10,000-line Claude Code session (`importForeign`, against `JSON.parse` per line)",
  measure(): RunResult {
    const dir = mkdtempSync(join(tmpdir(), "strata-import-bench-"));
    try {
      const file = join(dir, "session.jsonl");
      writeFileSync(file, claudeCodeSession(LINES));
      const imports: number[] = [];
      const parses: number[] = [];
      const ratios: number[] = [];
      let events = 0;
      for (let round = -1; round < ROUNDS; round++) {
        let t = performance.now();
        parseLines(file);
        const parse = performance.now() - t;
        const store = openStore(join(dir, `r${round + 1}.db`));
        t = performance.now();
        const r = importForeign(store, { from: "claude-code", path: file });
        const imp = performance.now() - t;
        store.close();
        if (r.problems.length > 0 || r.sessions.length !== 1) throw new Error(`the import reported ${JSON.stringify(r).slice(0, 400)}`);
        events = r.sessions[0]?.eventCount ?? 0;
        if (round < 0) continue; // warm-up: the JIT, the page cache
        imports.push(imp);
        parses.push(parse);
        ratios.push(imp / parse);
        progress(NAME, `round ${round + 1}/${ROUNDS}: import ${num(imp)} ms, JSON.parse ${num(parse)} ms`);
      }
      const metrics: Record<string, Sample> = { import: summarize(imports, "ms"), parse: summarize(parses, "ms") };
      return { metrics, values: { ratio: median(ratios), bytes: statSync(file).size, lines: LINES, events } };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  render(agg: Aggregate): string {
    const v = (k: string) => agg.values[k]?.median ?? Number.NaN;
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `A generated Claude Code 2.x session of ${num(v("lines"))} lines (${num(v("bytes") / 1e6)} MB: prompts, responses split over thinking, text and tool-call lines, tool results of 0.3–3 KB, snapshot bookkeeping) imported into a fresh SQLite store — ${num(v("events"))} events, one transaction — and, in the same rounds, the same file read and every line given to \`JSON.parse\` (median (p10–p90) over ${ROUNDS} rounds per process; the ratio is per round).`,
      "",
      table(
        ["", "wall"],
        [
          ["`importForeign` (claude-code)", cell(agg, "import")],
          ["read + `JSON.parse` per line (baseline)", cell(agg, "parse")],
        ],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    return [
      targetLine(
        agg,
        `importing a 10,000-line session against parsing it with JSON.parse per line (${num(med(agg, "import"))} ms against ${num(med(agg, "parse"))} ms)`,
        [{ key: "ratio", label: "import / parse" }],
        "<=",
        2,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
