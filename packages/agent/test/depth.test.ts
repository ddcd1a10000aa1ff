/**
 * Issue 11 item 17 (agent part; the session core's is packages/engine/test/depth.test.ts): no
 * recursion over untrusted depth. A request's tool schemas and arguments may nest any depth: their
 * canonical JSON is written with an explicit stack.
 */
import { describe, expect, it } from "vitest";
import type { ModelRequest } from "../src/index.ts";
import { requestDigest } from "../src/internal.ts";

describe("PR-15 request digests of any depth", () => {
  it("a tool schema nested 100,000 deep is digested (canonical JSON without recursion)", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 100_000; i++) schema = { type: "array", items: schema };
    const request: ModelRequest = {
      system: "s",
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "deep", description: "d", parameters: schema }],
      settings: { provider: "p", model: "m" },
    };
    const a = requestDigest(request);
    expect(a.tools).toMatch(/^[0-9a-f]{64}$/);
    // Canonical: key order does not matter, values do.
    expect(requestDigest({ ...request, settings: { model: "m", provider: "p" } }).hash).toBe(a.hash);
    expect(requestDigest({ ...request, settings: { provider: "p", model: "n" } }).hash).not.toBe(a.hash);
  });
});
