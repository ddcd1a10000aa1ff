/**
 * ST-36 with the engine's formats: a snapshot's pages are deflated JSON whose texts name blobs
 * (`["b", hash]`, EN-46) that no event names. `storedBlobRefs` reads them, so a collection after
 * removing another session keeps every blob a remaining session reads; the store's default
 * (text only) would not, which is why the CLI passes it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";
import { toXml } from "@strata/dom";
import { openStore, type Store, textRefs } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { Session, storedBlobRefs } from "../src/index.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A session of long texts (text blobs in its pages), snapshotted; its canonical XML. */
function build(store: Store, seed: string): { id: string; xml: string } {
  const s = Session.create(store);
  for (let i = 0; i < 30; i++)
    s.commit((d) => {
      const body = d.selectOne(":root > body")?.id;
      if (body === undefined) throw new Error("no body");
      d.appendChild(body, { tag: "note", text: `${seed} ${i} ${"long text that goes to a blob ".repeat(8)}` });
    });
  s.snapshot();
  return { id: s.id, xml: toXml(s.tree) };
}

describe("ST-36 collecting garbage with the engine's blob references", () => {
  it("after removing a session, a collection with storedBlobRefs keeps everything the other session reads", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-gc-"));
    dirs.push(dir);
    const path = join(dir, "s.db");
    const store = openStore(path);
    const kept = build(store, "kept");
    const gone = build(store, "gone");
    store.removeSession(gone.id as never);
    const dry = store.collectGarbage({ dryRun: true, refs: storedBlobRefs });
    const report = store.collectGarbage({ refs: storedBlobRefs });
    expect(report).toEqual({ ...dry, dryRun: false });
    expect(report.blobs).toBeGreaterThan(0);
    store.close();
    const again = openStore(path);
    const { session } = Session.open(again, kept.id as never);
    expect(toXml(session.tree)).toBe(kept.xml);
    expect(again.verify().findings).toEqual([]);
    expect(again.collectGarbage({ refs: storedBlobRefs }).blobs).toBe(0);
    again.close();
  });

  it("a blob named only inside a deflated page is kept with storedBlobRefs; the store's text-only default cannot see it", () => {
    for (const hook of [true, false]) {
      const store = openStore(":memory:");
      const text = store.putBlob("a text only the page names");
      const page = store.putBlob(Buffer.concat([Buffer.from("z"), deflateRawSync(JSON.stringify({ t: ["b", text] }))]));
      const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      store.putSnapshot(genesis.id, "{}", [page]);
      expect(storedBlobRefs(store.getBlob(page) as Buffer)).toContain(text);
      store.collectGarbage({ refs: hook ? storedBlobRefs : textRefs });
      expect(store.hasBlob(text), `with the hook: ${hook}`).toBe(hook);
      expect(store.hasBlob(page)).toBe(true);
      expect(store.getSession(session.id)).toBeDefined();
      store.close();
    }
  });

  it("storedBlobRefs reads plain text and deflated pages, and takes bytes that only look deflated as text", () => {
    const h = "a".repeat(64);
    expect(storedBlobRefs(Buffer.from(`j{"x":"${h}"}`))).toEqual([h]);
    expect(storedBlobRefs(Buffer.concat([Buffer.from("z"), deflateRawSync(`["b","${h}"]`)]))).toEqual([h]);
    expect(storedBlobRefs(Buffer.from(`zebra ${h}`))).toEqual([h]);
  });
});
