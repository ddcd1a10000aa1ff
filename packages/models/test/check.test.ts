/** Checking a model spec before anything is created (MO-16). */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkModelSpec, createModel, isLocalHost, ModelSpecError, type ModelSpecProblem } from "../src/index.ts";

const codes = (problems: readonly ModelSpecProblem[]) => problems.map((p) => p.code);

describe("MO-16 checkModelSpec: openai", () => {
  it("no key for a server elsewhere is a problem named before anything is created", () => {
    const problems = checkModelSpec("openai:gpt-4o-mini", { env: {} });
    expect(problems).toEqual([
      {
        code: "api-key-missing",
        message:
          "no OPENAI_API_KEY is set for https://api.openai.com: set it (a server that needs none accepts any value, e.g. OPENAI_API_KEY=none)",
      },
    ]);
    expect(codes(checkModelSpec("openai:m", { env: { OPENAI_BASE_URL: "https://llm.example.com/v1", OPENAI_API_KEY: "" } }))).toEqual([
      "api-key-missing",
    ]);
    expect(() => createModel("openai:gpt-4o-mini", { env: {} })).toThrow(ModelSpecError);
    expect(checkModelSpec("openai:gpt-4o-mini", { env: { OPENAI_API_KEY: "sk-test" } })).toEqual([]);
  });

  it("servers on this machine or a private network need no key (llama.cpp, vLLM, Ollama)", () => {
    for (const base of [
      "http://localhost:8080/v1",
      "http://127.0.0.1:8000/v1",
      "http://127.1.2.3/v1",
      "http://[::1]:11434/v1",
      "http://[::ffff:127.0.0.1]:1234/v1",
      "http://10.0.0.5:8000/v1",
      "http://172.20.1.1/v1",
      "http://192.168.1.20:11434/v1",
      "http://[fd12:3456::1]/v1",
      "http://ollama:11434/v1",
      "http://gpu-box.local:8080/v1",
      "http://vllm.internal/v1",
    ])
      expect(checkModelSpec("openai:m", { env: { OPENAI_BASE_URL: base } }), base).toEqual([]);
    for (const host of ["api.openai.com", "8.8.8.8", "172.32.0.1", "192.169.0.1", "[2001:db8::1]", "fc.example.com"])
      expect(isLocalHost(host), host).toBe(false);
  });

  it("a malformed OPENAI_BASE_URL is named with its value and an example", () => {
    const cases: [string, RegExp][] = [
      ["localhost:8080/v1", /must start with http:\/\/ or https:\/\//],
      ["http//127.0.0.1/v1", /is not a URL/],
      ["http://user:pw@127.0.0.1/v1", /must not carry a user or password/],
      ["http://127.0.0.1/v1#x", /must not have a #fragment/],
    ];
    for (const [base, why] of cases) {
      const [p, ...rest] = checkModelSpec("openai:m", { env: { OPENAI_BASE_URL: base, OPENAI_API_KEY: "k" } });
      expect(rest).toEqual([]);
      expect(p?.code).toBe("base-url-invalid");
      expect(p?.message).toContain(`OPENAI_BASE_URL ${JSON.stringify(base)}`);
      expect(p?.message).toMatch(why);
      expect(p?.message).toContain("set it like http://127.0.0.1:8080/v1");
    }
  });

  it("an empty OPENAI_BASE_URL means unset; no model name at all is a problem", () => {
    expect(checkModelSpec("openai:m", { env: { OPENAI_BASE_URL: "", OPENAI_API_KEY: "k" } })).toEqual([]);
    expect(codes(checkModelSpec("openai", { env: { OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } }))).toEqual(["model-name-missing"]);
    expect(codes(checkModelSpec("openai:", { env: { OPENAI_BASE_URL: "nope" } }))).toEqual(["model-name-missing", "base-url-invalid"]);
    expect(createModel("openai", { env: { OPENAI_MODEL: "from-env", OPENAI_BASE_URL: "http://127.0.0.1:1/v1" } }).id).toBe(
      "openai:from-env",
    );
  });

  it("a key HTTP cannot carry is named by position, never quoted", () => {
    const [p] = checkModelSpec("openai:m", { env: { OPENAI_API_KEY: "sk-abc\ndef" } });
    expect(p?.code).toBe("api-key-invalid");
    expect(p?.message).toMatch(/at position 7/);
    expect(p?.message).not.toContain("sk-abc");
  });
});

describe("MO-16 checkModelSpec: scripted and the rest", () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-check-"));
  writeFileSync(join(dir, "ok.json"), JSON.stringify({ name: "ok", turns: [{ text: "hi" }] }));
  writeFileSync(join(dir, "bad.json"), JSON.stringify({ name: "bad", turns: [] }));
  writeFileSync(join(dir, "broken.json"), "{");
  mkdirSync(join(dir, "folder.json"));

  it("names the file for a missing, unreadable or invalid script", () => {
    expect(checkModelSpec("scripted:ok.json", { cwd: dir })).toEqual([]);
    const missing = checkModelSpec("scripted:nope.json", { cwd: dir });
    expect(missing).toEqual([
      {
        code: "script-not-found",
        message: `the model script ${join(dir, "nope.json")} does not exist; pass an existing file (e.g. scripted:fixtures/models/demo.json)`,
        path: join(dir, "nope.json"),
      },
    ]);
    expect(checkModelSpec("scripted:folder.json", { cwd: dir })).toEqual([
      {
        code: "script-unreadable",
        message: `the model script ${join(dir, "folder.json")} is not a regular file`,
        path: join(dir, "folder.json"),
      },
    ]);
    expect(checkModelSpec("scripted:/dev/zero", { cwd: dir })[0]?.code).toBe("script-unreadable");
    const [bad] = checkModelSpec("scripted:bad.json", { cwd: dir });
    expect(bad?.code).toBe("script-invalid");
    expect(bad?.message).toBe(`${join(dir, "bad.json")}: \`turns\` must be a non-empty array`);
    expect(checkModelSpec("scripted:broken.json", { cwd: dir })[0]?.message).toMatch(/broken\.json is not valid JSON/);
    expect(codes(checkModelSpec("scripted:", {}))).toEqual(["script-path-missing"]);
    expect(codes(checkModelSpec("magic:x", {}))).toEqual(["unknown-provider"]);
  });

  it("createModel throws the same problems as a ModelSpecError with a code", () => {
    try {
      createModel("scripted:nope.json", { cwd: dir });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ModelSpecError);
      expect((error as ModelSpecError).code).toBe("script-not-found");
      expect((error as ModelSpecError).problems).toEqual(checkModelSpec("scripted:nope.json", { cwd: dir }));
    }
  });
});
