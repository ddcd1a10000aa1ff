/**
 * The writer process of the replica test (IN-18): `node --import tsx stream-writer.ts DB SESSION
 * STEPS SEED` drives branch `main` of SESSION the way sessions move — commits of text a framing
 * could trip on, streamed text, rewinds, the branch moved onto another branch's line, and the
 * session object switching to another branch and back — with short pauses, so a server following
 * `main` sees every kind of move while its clients are cut off and reconnect. Prints one JSON line
 * `{"head": id, "moves": {...}}` at the end. DB is a SQLite file or a PostgreSQL URL (the same
 * moves on either port: every call is awaited).
 */
import { nodeId } from "@strata/dom";
import { type Port, Session } from "@strata/engine";
import { type EventId, openStore, type SessionId } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";

const [db, sessionArg, stepsArg, seedArg] = process.argv.slice(2);
if (db === undefined || sessionArg === undefined) throw new Error("usage: stream-writer.ts DB SESSION [STEPS] [SEED]");
const sid = sessionArg as SessionId;
const steps = Number(stepsArg ?? 120);
let seed = Number(seedArg ?? 1) >>> 0 || 1;
/** xorshift32: the same run for the same seed. */
const rand = (): number => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 2 ** 32;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BODY = nodeId(3);
const TEXTS = ["plain", "data: not a field\n\nevent: reset@1", "line\r\nbreaks\rand\n", "é 😀 \u2028 ü", ": a comment?", "x".repeat(3000)];

const store: Port = /^postgres(ql)?:\/\//.test(db) ? await openPgStore(db, { max: 2 }) : openStore(db);
/** The branch opened, its tree loaded (over PostgreSQL a tree loads on demand: the moves read it whole). */
const open = async (): Promise<Session<Port>> => {
  const s = (await Session.open(store, sid)).session;
  await s.load();
  return s;
};
let main = await open();
const moves = { commit: 0, stream: 0, rewind: 0, moveOnto: 0, switchAway: 0 };

async function commit(s: Session<Port>): Promise<void> {
  await s.load();
  const turns = s.select("body > turn");
  const r = rand();
  if (turns.length > 0 && r < 0.3) await s.commit([["set", pick(turns).id, "status", pick(["a", "b", "c"])]], { label: "turn.status" });
  else if (turns.length > 2 && r < 0.4) await s.commit([["rm", pick(turns).id]], { label: "turn.rm" });
  else
    await s.commit([["ins", BODY, null, { tag: "turn", attrs: { n: String(moves.commit) }, text: pick(TEXTS) }]], {
      label: "turn.add",
      by: "writer",
    });
}

for (let i = 0; i < steps; i++) {
  const r = rand();
  if (r < 0.55) {
    await commit(main);
    moves.commit++;
  } else if (r < 0.65) {
    // Streamed text becomes durable `append` ops: what the server sees of a stream.
    let out = BODY;
    await main.commit((d) => {
      out = d.appendChild(BODY, { tag: "out" });
    });
    const w = main.stream(out, { intervalMs: 5 });
    for (let k = 0; k < 5; k++) {
      w.append(`${pick(TEXTS)} ${k}\n`);
      await sleep(3);
    }
    w.close();
    await main.flush();
    moves.stream++;
  } else if (r < 0.77) {
    const chain = await main.log();
    const target = pick(chain.slice(0, Math.max(1, chain.length - 1))).id;
    await main.rewind(target);
    moves.rewind++;
  } else if (r < 0.88) {
    // Branch `main` moved onto another line: a fork, a commit or two there, then main's head.
    const chain = await main.log();
    const alt = await main.fork(pick(chain).id, { name: `alt-${i}` });
    for (let k = 0, n = 1 + Math.floor(rand() * 3); k < n; k++) await commit(alt);
    await store.moveHead(sid, "main", alt.head.id, { expected: main.head.id });
    await alt.close();
    await main.close();
    main = await open();
    moves.moveOnto++;
  } else {
    // The session object switches to another branch, writes there, and comes back: main is untouched.
    const others = (await main.branches()).filter((b) => b.name.startsWith("alt-"));
    if (others.length > 0) {
      await main.switchTo(pick(others).name);
      await commit(main);
      await main.switchTo("main");
      moves.switchAway++;
    }
  }
  await sleep(Math.floor(rand() * 150));
}
const head: EventId = main.head.id;
await main.close();
await store.close();
process.stdout.write(`${JSON.stringify({ head, moves })}\n`);
