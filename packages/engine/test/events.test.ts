/**
 * EN-1, EN-2: the two event kinds and how a payload is read back. A session starts with one
 * `genesis@1` event holding its fixed skeleton; every other event is `patch@1` whose payload is
 * exactly `{"ops":[…]}`; a payload is decoded and validated before it is folded, and a kind this
 * build does not know is an error that says a newer strata may have written it.
 */
import { nodeId, select, toXml } from "@strata/dom";
import { type EventId, openStore, type SessionId } from "@strata/store";
import { describe, expect, it } from "vitest";
import { DEFAULT_SKELETON, decodeEvent, EngineError, materialize, Session } from "../src/index.ts";

const BODY = nodeId(3);

/** The `EngineError` code of what `f` throws. */
function engineCode(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof EngineError) return `${e.code}: ${e.message}`;
    throw e;
  }
  throw new Error("did not throw");
}

describe("EN-1 event kinds", () => {
  it("a session's first event is genesis@1 with the fixed skeleton; every commit is patch@1 holding exactly its ops", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const [genesis] = s.log();
    expect(genesis?.kind).toBe("genesis@1");
    expect(genesis?.prior).toBeNull();
    const data = JSON.parse(store.event(genesis?.id as EventId)?.data ?? "null") as { skeleton: unknown; hwm: number };
    expect(data.skeleton).toEqual(DEFAULT_SKELETON);
    expect(data.hwm).toBe(255); // ids up to 255 are kept for the skeleton: page 0 holds nothing else
    expect(toXml(s.tree, { ids: false })).toBe("<session><meta/><body/></session>");

    const ops = [["ins", BODY, null, { tag: "turn", attrs: { role: "user" }, text: "hi" }]] as const;
    const m = s.commit([...ops], { label: "turn.user" });
    const stored = store.event(m.id);
    expect(stored?.kind).toBe("patch@1");
    expect(stored?.data).toBe(JSON.stringify({ ops }));
  });

  it("a session made with another skeleton records that skeleton, and its elements are the fixed ones", () => {
    const store = openStore(":memory:");
    const skeleton = { tag: "run", children: [{ tag: "config" }, { tag: "log" }, { tag: "scratch" }] };
    const s = Session.create(store, { genesis: skeleton });
    const data = JSON.parse(store.event(s.log()[0]?.id as EventId)?.data ?? "null") as { skeleton: unknown };
    expect(data.skeleton).toEqual(skeleton);
    expect(toXml(s.tree, { ids: false })).toBe("<run><config/><log/><scratch/></run>");
    expect(s.tree.fixed).toEqual([1, 2, 3, 4]);
  });
});

describe("EN-2 decoding", () => {
  /** A session with one good patch, then `kind`/`data` appended raw, as a damaged or newer log would hold it. */
  function withRaw(kind: string, data: string): { store: ReturnType<typeof openStore>; good: EventId; raw: EventId; session: SessionId } {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const good = s.commit([["ins", BODY, null, { tag: "ok" }]]).id;
    const [raw] = store.append(s.id, "main", good, [{ kind, data }]);
    return { store, good, raw: raw?.id as EventId, session: s.id };
  }

  it("a kind this build does not know is unknown-kind, saying a newer strata may have written it", () => {
    const { store, good, raw } = withRaw("patch@2", '{"ops":[]}');
    expect(engineCode(() => materialize(store, raw))).toMatch(
      new RegExp(
        `^unknown-kind: event ${raw} has kind "patch@2", which this strata does not know .*it may have been written by a newer version`,
      ),
    );
    // What came before it still materializes.
    expect(select(materialize(store, good), "body > ok")).toHaveLength(1);
  });

  it("a payload that is not JSON, not {ops: […]}, or holds an op that does not decode is bad-event naming the event", () => {
    for (const [data, message] of [
      ["{not json", /payload is not JSON/],
      ['{"ops":5}', /a patch@1 payload is \{"ops":\[…\]\}/],
      ['{"ops":[["ins",3,null,{"tag":"ok"}],["rm"]]}', /op 1: /],
      ['{"ops":[["set",3,"bad name","v"]]}', /op 0: /],
    ] as const) {
      const { store, raw } = withRaw("patch@1", data);
      const got = engineCode(() => materialize(store, raw));
      expect(got, data).toMatch(/^bad-event: /);
      expect(got, data).toContain(`event ${raw}`);
      expect(got, data).toMatch(message);
    }
  });

  it("a payload is decoded and validated before it is folded: nothing of a bad patch is applied", () => {
    const ops = '{"ops":[["ins",3,null,{"tag":"first"}],["set",99999,"a","b"]]}';
    const { store, raw, session } = withRaw("patch@1", ops);
    expect(decodeEvent({ id: raw, kind: "patch@1", data: ops })).toMatchObject({ kind: "patch" }); // well-formed ops …
    expect(engineCode(() => materialize(store, raw))).toMatch(/^bad-event: event \d+ does not apply/); // … that do not apply
    expect(engineCode(() => Session.open(store, session))).toMatch(/^bad-event: /);
    expect(engineCode(() => decodeEvent({ id: raw, kind: "genesis@1", data: '{"skeleton":{"tag":"bad name"}}' }))).toMatch(
      /^bad-event: event \d+: /,
    );
  });
});
