/**
 * The agent workload of the store and engine benchmarks (issue 3): per step, one assistant message
 * with one tool call of about 300 B of arguments, then its start, then its result of 1–2 KB —
 * about 2.7 KB per step, written as the three events the engine really writes:
 *
 *   model.reply  ins <turn><assistant>…</assistant><call …><args>{…}</args></call></turn>
 *   tool.start   set call status=running
 *   tool.result  set call status=executed, ins <output>…</output>
 *
 * Text is deterministic (seeded), varied enough that compression cannot hide anything.
 */
import { rmSync } from "node:fs";
import { type NodeId, nodeId, type Op } from "@strata/dom";
import { Journal } from "@strata/engine/internal";
import type { EventId, EventInput, SessionId, Store, StoredEvent } from "@strata/store";
import Database from "better-sqlite3";
import { rng } from "./stats.ts";

const WORDS =
  "the of and to in is that for it as with was on be by this are or at from an which have not but can all were we when there use your each how said if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split(
    " ",
  );

/** `bytes` characters of word-salad text from a seeded generator. */
export function prose(r: () => number, bytes: number): string {
  let out = "";
  while (out.length < bytes) out += `${WORDS[Math.floor(r() * WORDS.length)]}${r() < 0.08 ? ".\n" : " "}`;
  return out.slice(0, bytes);
}

const BODY = nodeId(3);

/** Commits one step (three events) through the journal; returns nothing (ids are read from the tree). */
export function commitStep(j: Journal, i: number, r: () => number): void {
  const last = j.tree.rec(BODY)?.last ?? 0;
  const args = JSON.stringify({ path: `/src/module_${i % 977}.ts`, query: prose(r, 240) });
  j.commit({
    label: "model.reply",
    ops: [
      [
        "ins",
        BODY,
        last === 0 ? null : (last as NodeId),
        {
          tag: "turn",
          attrs: { n: String(i) },
          children: [
            { tag: "assistant", text: prose(r, 380) },
            {
              tag: "call",
              attrs: { id: `call_${i}`, key: `k${i}`, tool: "read_file", status: "pending" },
              children: [{ tag: "args", text: args }],
            },
          ],
        },
      ],
    ],
  });
  const turn = j.tree.rec(BODY)?.last as number;
  const call = j.tree.childIds(turn)[1] as NodeId;
  const argsId = j.tree.childIds(call)[0] as NodeId;
  j.commit({ label: "tool.start", ops: [["set", call, "status", "running"]] });
  const ops: Op[] = [
    ["set", call, "status", "executed"],
    ["ins", call, argsId, { tag: "output", text: prose(r, 1000 + Math.floor(r() * 1000)) }],
  ];
  j.commit({ label: "tool.result", ops });
}

/** Builds a session of `steps` steps with the engine's own write path; returns its id and head. */
export function buildSession(
  store: Store,
  steps: number,
  options: { snapshotEvery?: number; seed?: number } = {},
): { session: SessionId; head: EventId } {
  const { journal } = Journal.create(store, { title: `bench ${steps}` }, { snapshotEvery: options.snapshotEvery });
  const r = rng(options.seed ?? 7);
  for (let i = 0; i < steps; i++) commitStep(journal, i, r);
  return { session: journal.session, head: journal.head.id };
}

/** The events (payloads included) of a built session's main branch, in order, after genesis. */
export function* eventsOf(store: Store, head: EventId, batch = 5000): Generator<StoredEvent> {
  let depth = 1;
  for (;;) {
    const list = store.chain(head, depth, batch);
    if (list.length === 0) return;
    for (const e of list) yield e;
    depth = (list[list.length - 1] as StoredEvent).depth;
  }
}

export function toInput(e: StoredEvent): EventInput {
  return { kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data };
}

/**
 * The raw baseline: one row per event in a plain SQLite table with a session index — what storing
 * the same bytes "by hand" costs. WAL, same `synchronous`, one statement (autocommit) per event.
 */
export class RawLog {
  readonly db: Database.Database;
  readonly #insert: Database.Statement;
  constructor(
    readonly path: string,
    synchronous: "NORMAL" | "FULL" = "NORMAL",
  ) {
    rmSync(path, { force: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.exec(
      "CREATE TABLE log (id INTEGER PRIMARY KEY, session TEXT NOT NULL, ts INTEGER NOT NULL, kind TEXT NOT NULL, label TEXT, data TEXT NOT NULL);" +
        "CREATE INDEX log_session ON log (session, id);",
    );
    this.#insert = this.db.prepare("INSERT INTO log (session, ts, kind, label, data) VALUES (?, ?, ?, ?, ?)");
  }
  append(session: string, e: EventInput): void {
    this.#insert.run(session, e.ts ?? 0, e.kind, e.label ?? null, e.data);
  }
  close(): void {
    this.db.close();
  }
}
