/**
 * ST-7 `chainData` on payloads that are the empty string next to blob-backed ones (ST-14): both
 * read back exactly as `chain` reads them, on the rowid-range path and on the (segment, depth)
 * index path. (Found by the fixture test, compat.test.ts: the v2 and v3 fixtures hold an event
 * whose payload is "", and `chainData` took it for a blob-backed one and failed with `internal`.)
 */
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SessionId, type Store } from "../src/index.ts";
import { fileStore } from "./helpers.ts";

const PAYLOADS = ["", "a payload longer than the inline limit", "", "x", "another payload over the limit", ""];

function appendAll(store: Store, session: SessionId, head: EventId, payloads: readonly string[]): EventId {
  for (const data of payloads) head = store.append(session, "main", head, [{ kind: "patch@1", data }])[0]?.id as EventId;
  return head;
}

describe("ST-7 chainData reads empty payloads and blob-backed payloads alike", () => {
  for (const where of ["memory", "file"] as const)
    it(`${where}: a line appended alone (rowid range) and one interleaved with another session (depth index)`, () => {
      const store = where === "memory" ? openStore(":memory:", { inlineLimit: 16 }) : fileStore({ inlineLimit: 16 }).store;
      const genesis = { kind: "genesis@1", data: "{}" };
      // alone: one span, read as a rowid range
      const a = store.createSession({ genesis });
      const headA = appendAll(store, a.session.id, a.genesis.id, PAYLOADS);
      // interleaved: three sessions appended in turn, so each span is read through the (segment, depth) index
      const others = [0, 1, 2].map(() => store.createSession({ genesis }));
      const heads = others.map((o) => o.genesis.id);
      for (const data of PAYLOADS)
        others.forEach((o, i) => {
          heads[i] = appendAll(store, o.session.id, heads[i] as EventId, [data.repeat(i + 1)]);
        });
      for (const head of [headA, ...heads]) {
        const chain = store.chain(head).map((e) => e.data);
        expect(store.chainData(head)).toEqual(chain);
        for (const after of [0, 1, 2, 3])
          for (const limit of [1, 2, 4, 100]) expect(store.chainData(head, after, limit)).toEqual(chain.slice(after, after + limit));
      }
      expect(store.chainData(headA)).toEqual(["{}", ...PAYLOADS]);
      store.close();
    });
});
