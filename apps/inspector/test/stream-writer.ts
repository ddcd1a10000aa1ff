/**
 * The writer process of the replica test (IN-18): `node --import tsx stream-writer.ts DB SESSION
 * STEPS SEED` drives branch `main` of SESSION the way sessions move — commits of text a framing
 * could trip on, streamed text, rewinds, the branch moved onto another branch's line, and the
 * session object switching to another branch and back — with short pauses, so a server following
 * `main` sees every kind of move while its clients are cut off and reconnect. Prints one JSON line
 * `{"head": id, "moves": {...}}` at the end.
 */
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { type EventId, openStore, type SessionId } from "@strata/store";

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

const store = openStore(db);
let main = Session.open(store, sid).session;
const moves = { commit: 0, stream: 0, rewind: 0, moveOnto: 0, switchAway: 0 };

function commit(s: Session): void {
  const turns = s.select("body > turn");
  const r = rand();
  if (turns.length > 0 && r < 0.3) s.commit([["set", pick(turns).id, "status", pick(["a", "b", "c"])]], { label: "turn.status" });
  else if (turns.length > 2 && r < 0.4) s.commit([["rm", pick(turns).id]], { label: "turn.rm" });
  else
    s.commit([["ins", BODY, null, { tag: "turn", attrs: { n: String(moves.commit) }, text: pick(TEXTS) }]], {
      label: "turn.add",
      by: "writer",
    });
}

for (let i = 0; i < steps; i++) {
  const r = rand();
  if (r < 0.55) {
    commit(main);
    moves.commit++;
  } else if (r < 0.65) {
    // Streamed text becomes durable `append` ops: what the server sees of a stream.
    let out = BODY;
    main.commit((d) => {
      out = d.appendChild(BODY, { tag: "out" });
    });
    const w = main.stream(out, { intervalMs: 5 });
    for (let k = 0; k < 5; k++) {
      w.append(`${pick(TEXTS)} ${k}\n`);
      await sleep(3);
    }
    w.close();
    moves.stream++;
  } else if (r < 0.77) {
    const chain = main.log();
    const target = pick(chain.slice(0, Math.max(1, chain.length - 1))).id;
    main.rewind(target);
    moves.rewind++;
  } else if (r < 0.88) {
    // Branch `main` moved onto another line: a fork, a commit or two there, then main's head.
    const chain = main.log();
    const alt = main.fork(pick(chain).id, { name: `alt-${i}` });
    for (let k = 0, n = 1 + Math.floor(rand() * 3); k < n; k++) commit(alt);
    store.moveHead(sid, "main", alt.head.id, { expected: main.head.id });
    alt.close();
    main.close();
    main = Session.open(store, sid).session;
    moves.moveOnto++;
  } else {
    // The session object switches to another branch, writes there, and comes back: main is untouched.
    const others = main.branches().filter((b) => b.name.startsWith("alt-"));
    if (others.length > 0) {
      main.switchTo(pick(others).name);
      commit(main);
      main.switchTo("main");
      moves.switchAway++;
    }
  }
  await sleep(Math.floor(rand() * 150));
}
const head: EventId = main.head.id;
main.close();
store.close();
process.stdout.write(`${JSON.stringify({ head, moves })}\n`);
