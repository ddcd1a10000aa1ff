/**
 * The step of the public-API benchmarks (issue 14): **one step = one event** inserting a `<turn>`
 * with a short assistant text (380 B), one `<call>` with ~300 B of JSON arguments and its 1–2 KB
 * tool output, already settled (`status="executed"`, so no lifecycle work is pending):
 *
 *   <turn n="i"><assistant>…</assistant><call id key tool status="executed"><args>{…}</args><output>…</output></call></turn>
 *
 * The texts come from `bench/lib/agent.ts`'s seeded word salad, drawn in the same order as its
 * three-event step, so the strata writer, the raw baseline and Pi store the same content. Pi stores
 * a step the way it stores one natively: an assistant message (text + tool call) and a tool result,
 * two JSONL entries.
 */
import type { NodeId, NodeSpec, Op, Tree } from "@strata/dom";
import { bodyOf } from "@strata/engine";
import { prose } from "../lib/agent.ts";
import { rng } from "../lib/stats.ts";

/** Seed of every writer's generator (the same content everywhere). */
export const SEED = 7;
/** Steps per timed block of the writers: one snapshot per block at strata's default cadence (128 events). */
export const BLOCK = 128;
/** The elements whose text is a message's content: what "every message with its content" reads. */
export const MESSAGES = "assistant, args, output";

/** One step's content. */
export interface Step {
  readonly i: number;
  readonly assistant: string;
  /** The tool call's arguments, as JSON text. */
  readonly args: string;
  readonly output: string;
}

/** The steps of a session, in order, from the seeded generator. */
export function* steps(count: number, from = 0, seed = SEED): Generator<Step> {
  const r = rng(seed);
  for (let i = 0; i < from + count; i++) {
    const args = JSON.stringify({ path: `/src/module_${i % 977}.ts`, query: prose(r, 240) });
    const assistant = prose(r, 380);
    const output = prose(r, 1000 + Math.floor(r() * 1000));
    if (i >= from) yield { i, assistant, args, output };
  }
}

/** The `<turn>` of a step. */
export function turnSpec(s: Step): NodeSpec {
  return {
    tag: "turn",
    attrs: { n: String(s.i) },
    children: [
      { tag: "assistant", text: s.assistant },
      {
        tag: "call",
        attrs: { id: `call_${s.i}`, key: `k${s.i}`, tool: "read_file", status: "executed" },
        children: [
          { tag: "args", text: s.args },
          { tag: "output", text: s.output },
        ],
      },
    ],
  };
}

/** The patch of one step on `tree`: insert the turn after the last child of `<body>`. */
export function stepOps(tree: Tree, s: Step): Op[] {
  const body = bodyOf(tree);
  return [["ins", body.id, body.lastChild === null ? null : body.lastChild.id, turnSpec(s)]];
}

/**
 * The payload a writer without strata stores for a step (the raw writer's own process): the same
 * `{"ops":[…]}` text strata stores, with the ids a session of this shape gets (turns 5 ids apart).
 */
export function rawPayload(s: Step): string {
  const after = s.i === 0 ? null : ((256 + 5 * (s.i - 1)) as NodeId);
  return JSON.stringify({ ops: [["ins", 3, after, turnSpec(s)]] });
}

/** Messages and characters of content in a decoded `{"ops":[…]}` payload (the raw read's floor). */
export function contentOf(data: string, into: { messages: number; chars: number }): void {
  const ops = (JSON.parse(data) as { ops?: unknown[] }).ops ?? [];
  for (const op of ops) if (Array.isArray(op) && op[0] === "ins") specContent(op[3] as NodeSpec, into);
}

function specContent(spec: NodeSpec, into: { messages: number; chars: number }): void {
  if (spec.text !== undefined && spec.text !== "") {
    into.messages++;
    into.chars += spec.text.length;
  }
  for (const c of spec.children ?? []) specContent(c, into);
}
