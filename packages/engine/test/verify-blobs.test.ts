/**
 * EN-16/EN-33: `verifyStore` reports every blob the session refers to that the file does not hold
 * — blobs named by elements an event inserted, and blobs named by a branch head's tree (a value
 * set later, e.g. an `inputs.update` of the template) — as `missing-blob`, never "ok".
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { Session, verifyStore } from "../src/index.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbPath(): string {
  const d = mkdtempSync(join(tmpdir(), "strata-verify-blobs-"));
  dirs.push(d);
  return join(d, "s.db");
}

// better-sqlite3 is the store's dependency, not the engine's: reach it through the store package.
const Database = createRequire(join(import.meta.dirname, "..", "..", "store", "package.json"))("better-sqlite3");

function deleteBlob(path: string, hash: string): void {
  const db = new Database(path);
  try {
    const n = db.prepare("DELETE FROM blobs WHERE hash = ?").run(Buffer.from(hash, "hex")).changes;
    expect(n).toBe(1);
  } finally {
    db.close();
  }
}

describe("EN-33 verify finds blobs the session refers to and the file lacks", () => {
  it("a template blob an event inserted, and one a later update set at the head", () => {
    const path = dbPath();
    const store = openStore(path, { create: true });
    const s = Session.create(store, { title: "t" });
    // A template as @strata/agent records it (inserted), then as a later run updates it (`set`).
    const first = store.putBlob("first {{ 1 }}");
    s.commit([["ins", nodeId(2), null, { tag: "config", children: [{ tag: "template", attrs: { name: "system", hash: first } }] }]], {
      label: "inputs.record",
    });
    const second = store.putBlob("second {{ 2 }}");
    s.commit([["set", nodeId(s.selectOne("template")?.id as number), "hash", second]], { label: "inputs.update" });
    expect(first).not.toBe(second);
    expect(verifyStore(store).ok).toBe(true);
    store.close();

    deleteBlob(path, first);
    const a = openStore(path, { readonly: true });
    const r1 = verifyStore(a);
    a.close();
    expect(r1.ok).toBe(false);
    expect(r1.findings.some((f) => f.message.includes(first.slice(0, 12)))).toBe(true);

    deleteBlob(path, second);
    const b = openStore(path, { readonly: true });
    const r2 = verifyStore(b);
    b.close();
    const head = r2.findings.filter((f) => f.code === "missing-blob");
    expect(head).toHaveLength(1);
    expect(head[0]?.message).toContain(second);
    expect(head[0]?.message).toContain('branch "main"');
  });
});
