/**
 * EN-44: each condition has its own error code. `not-found` means only that an event, session,
 * branch or element does not exist; a closed session object is `closed`, a writer whose stream
 * ended is `stream-ended`, a replica without a snapshot is `not-ready`.
 */
import { type NodeId, nodeId } from "@strata/dom";
import { type EventId, openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { EngineError, Replica, Session } from "../src/index.ts";

const BODY = nodeId(3);

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof EngineError) return e.code;
    throw e;
  }
  return undefined;
}

function streamed(s: Session): NodeId {
  let id = 0 as NodeId;
  s.commit((d) => {
    id = d.appendChild(BODY, { tag: "reply" });
  });
  return id;
}

describe("EN-44 one code per condition", () => {
  it("what does not exist is not-found", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    expect(code(() => s.at(99999 as EventId))).toBe("not-found");
    expect(code(() => s.switchTo("nope"))).toBe("not-found");
    expect(code(() => s.stream(nodeId(9999)))).toBe("not-found");
    expect(code(() => Session.open(store, "s-missing" as never))).toBe("not-found");
  });

  it("a closed session object is closed, not not-found", () => {
    const s = Session.create(openStore(":memory:"));
    s.close();
    const e = (() => {
      try {
        s.commit((d) => d.appendChild(BODY, { tag: "x" }));
      } catch (err) {
        return err as EngineError;
      }
    })();
    expect(e).toBeInstanceOf(EngineError);
    expect(e?.code).toBe("closed");
    expect(e?.message).toMatch(/closed in this process; open it again/);
  });

  it("a writer whose stream ended is stream-ended, whichever way it ended", () => {
    // The element was removed by a commit.
    const a = Session.create(openStore(":memory:"));
    const w1 = a.stream(streamed(a));
    w1.append("hi");
    a.commit((d) => d.remove(w1.element));
    expect(code(() => w1.append("more"))).toBe("stream-ended");

    // The session moved to another line of history.
    const b = Session.create(openStore(":memory:"));
    const first = b.headId();
    const w2 = b.stream(streamed(b));
    b.rewind(first);
    expect(code(() => w2.append("more"))).toBe("stream-ended");

    // The session was closed.
    const c = Session.create(openStore(":memory:"));
    const w3 = c.stream(streamed(c));
    c.close();
    expect(code(() => w3.append("more"))).toBe("stream-ended");
  });

  it("a replica read or fed before its snapshot is not-ready", () => {
    const r = new Replica();
    expect(code(() => r.tree)).toBe("not-ready");
    expect(code(() => r.apply({ type: "event", id: 2 as EventId, label: "x", ops: [] } as never))).toBe("not-ready");
  });
});
