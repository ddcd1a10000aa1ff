/**
 * CLI-42 `strata chat` and CLI-43 the picker: scripted through stdin (every line a message or a
 * slash command), and in a real terminal (a tmux pane): typing, a streamed reply, a resize, Ctrl-C
 * cancelling a running call (recorded as cancelled), the conversation going on, and leaving.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cleanEnv, cleanup, json, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A conversation: a greeting, a file written, a reply, a slow command, then short replies. */
function chatScript(dir: string): string {
  return script(dir, "chat", [
    { text: "Hello! What shall we do?" },
    { text: "Writing it.", toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hello\n" } }] },
    { text: "Done: hello.txt." },
    { text: "Counting.", toolCalls: [{ name: "run", arguments: { command: "for i in $(seq 1 40); do echo tick$i; sleep 0.5; done" } }] },
    { text: "Counted." },
    { text: "Reply six." },
    { text: "Reply seven." },
  ]);
}

interface LogDoc {
  readonly events: { readonly id: number; readonly label: string }[];
}

describe("CLI-42 strata chat, scripted through stdin", () => {
  it("sends each line as a message on one session, runs slash commands on it, and leaves at the end of input", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    const r = await strata(dir, ["chat", "--model", model], {
      input: "hi\nplease write hello.txt\n/files\n/branches\n",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/user {2}hi\nassistant {2}Hello! What shall we do\?/);
    expect(r.stdout).toMatch(/✓ write_file executed/);
    expect(r.stdout).toMatch(/hello\.txt/); // /files
    expect(r.stdout).toMatch(/BRANCH\s+HEAD/); // /branches
    expect(readFileSync(join(dir, "hello.txt"), "utf8")).toBe("hello\n");
    // one session holds both messages, each a turn.user event
    const log = json<LogDoc>(await strata(dir, ["log", "@last", "--limit", "0", "--json"]));
    expect(log.events.filter((e) => e.label === "turn.user")).toHaveLength(2);
    const ls = json<{ sessions: { title: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions.map((s) => s.title)).toEqual(["hi"]);
  }, 120_000);

  it("a turn the model fails shows its stop, not an empty reply; the chat goes on and exits with the last turn's code", async () => {
    const dir = tempDir();
    const model = script(dir, "one", [{ text: "Only reply." }]);
    const r = await strata(dir, ["chat", "--model", model], { input: "a\nb\n" });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/assistant {2}Only reply\./);
    expect(r.stdout).toMatch(/user {2}b\n■ model-error — the script "one" has 1 turns/);
    expect(r.stdout).not.toMatch(/assistant {2}\n/);
  }, 120_000);

  it("a slash command given words it does not take is refused, and does nothing: /undo bogus rewinds nothing", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    const r = await strata(dir, ["chat", "--model", model], {
      input: "hi\n/undo bogus\n/prompt 6\n/log --json\n/tree --depth\n/exit now\n/diff zzz\n/branches\n",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\/undo takes no argument besides its options, got 1: \/undo \[--force\]/);
    expect(r.stderr).toMatch(/\/prompt takes no argument besides its options, got 1/);
    expect(r.stderr).toMatch(/\/log has no option --json/);
    expect(r.stderr).toMatch(/--depth needs a value/);
    expect(r.stderr).toMatch(/\/exit takes no argument, got 1/);
    expect(r.stderr).toMatch(
      /\/diff takes an EVENT of this branch \(an id, or head~N; \/log lists them\), or two addresses \(S@E S@E\), got "zzz"/,
    );
    expect(r.stdout).toMatch(/\(1 step, 0 calls, \d+ tokens · event \d+\)/);
    expect(r.stdout).toMatch(/BRANCH\s+HEAD/); // the chat went on after them
    expect(r.stdout).not.toMatch(/rewound/);
    const branches = await strata(dir, ["branches", "@last", "-q"]);
    expect(branches.stdout.trim()).toBe("main");
  }, 120_000);

  it("a line ending in \\ goes on on the next: one message of several lines", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    const r = await strata(dir, ["chat", "--model", model], { input: "line one\\\nline two \\\nline three\n" });
    expect(r.code, r.stderr).toBe(0);
    const sent = await strata(dir, ["show", "@last", "--select", "turn[role=user] > text", "--json"]);
    expect(json<{ elements: { text: string }[] }>(sent).elements.map((e) => e.text)).toEqual(["line one\nline two \nline three"]);
  }, 120_000);

  it("-c continues the last session; /undo takes back the last message with its files; /fork goes on on a new branch", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    expect((await strata(dir, ["chat", "--model", model], { input: "hi\nplease write hello.txt\n" })).code).toBe(0);
    expect(existsSync(join(dir, "hello.txt"))).toBe(true);
    const r = await strata(dir, ["chat", "-c"], { input: "/undo\n/fork try\nwrite it again\n/session\n" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/rewound \w+@main/);
    expect(r.stdout).toMatch(/remove {5}hello\.txt/);
    // the undone message's file is gone from main's directory
    expect(existsSync(join(dir, "hello.txt"))).toBe(false);
    expect(r.stdout).toMatch(/now on \w+@try/);
    expect(r.stdout).toMatch(/branch try · head \d+/);
    const branches = json<{ branches: { name: string; origin: string }[] }>(await strata(dir, ["branches", "@last", "--json"]));
    const names = branches.branches.map((b) => b.name).sort();
    expect(names).toHaveLength(3);
    expect(names[0]).toBe("main");
    expect(names[1]).toMatch(/^rewound\/main\/\d+$/); // the head the undo left, kept
    expect(names[2]).toBe("try");
    // the message after /fork was sent on try, in its own directory; main has one message left
    const onTry = json<LogDoc>(await strata(dir, ["log", "@last@try", "--limit", "0", "--json"]));
    expect(onTry.events.filter((e) => e.label === "turn.user")).toHaveLength(2);
    const onMain = json<LogDoc>(await strata(dir, ["log", "@last", "--limit", "0", "--json"]));
    expect(onMain.events.filter((e) => e.label === "turn.user")).toHaveLength(1);
  }, 120_000);

  it("refuses what it cannot do: no model for a new chat, an event address, -r off a terminal, a branch another process drives", async () => {
    const dir = tempDir();
    const noModel = await strata(dir, ["chat"], { input: "hi\n" });
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/no model is configured/);
    expect(noModel.stderr).not.toMatch(/\n\s+at /);
    const model = chatScript(dir);
    expect((await strata(dir, ["chat", "--model", model], { input: "hi\n" })).code).toBe(0);
    const at = await strata(dir, ["chat", "@last@3"]);
    expect(at.code).toBe(2);
    expect(at.stderr).toMatch(/fork there first/);
    const pick = await strata(dir, ["chat", "-r"]);
    expect(pick.code).toBe(2);
    expect(pick.stderr).toMatch(/on a terminal/);
    const both = await strata(dir, ["chat", "-c", "-r"]);
    expect(both.code).toBe(2);
    const unknown = await strata(dir, ["chat", "-c"], { input: "/nope\n/rewind\n" });
    expect(unknown.code).toBe(0);
    expect(unknown.stderr).toMatch(/no command \/nope/);
    expect(unknown.stderr).toMatch(
      /\/rewind takes 1 argument besides its options, got 0: \/rewind EVENT \[--force\] \(EVENT: an id, or head~N/,
    );
    const resume = await strata(dir, ["resume"]);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toMatch(/picks on a terminal/);
  }, 120_000);
});

/** A tmux pane running `command` in `dir`; `keys` types, `screen` reads it. */
function pane(dir: string, command: string) {
  const socket = `strata-chat-${process.pid}-${Date.now()}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: cleanEnv() });
  tmux("new-session", "-d", "-s", "t", "-x", "140", "-y", "45", "-c", dir, `NO_COLOR=1 ${command}; echo "EXIT=$?"; sleep 60`);
  const screen = () => tmux("capture-pane", "-p", "-t", "t", "-S", "-200");
  return {
    screen,
    keys: (...k: string[]) => void tmux("send-keys", "-t", "t", ...k),
    /** Pastes `text` as a terminal does: bracketed (the application asked for it) when it asked. */
    paste: (text: string) => {
      tmux("set-buffer", "-b", "p", text);
      tmux("paste-buffer", "-p", "-b", "p", "-t", "t");
    },
    resize: (x: number, y: number) => void tmux("resize-window", "-t", "t", "-x", String(x), "-y", String(y)),
    async until(re: RegExp, ms = 30_000): Promise<string> {
      const end = Date.now() + ms;
      for (;;) {
        const s = screen();
        if (re.test(s)) return s;
        if (Date.now() > end) throw new Error(`timed out waiting for ${re}; the screen:\n${s}`);
        await sleep(150);
      }
    },
    close: () => void tmux("kill-server"),
  };
}

describe.skipIf(!hasTmux)("CLI-42 strata chat in a real terminal (tmux)", () => {
  it("a message streams its reply, a resize keeps the prompt, Ctrl-C cancels the running call, the chat goes on, twice Ctrl-C leaves", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    const t = pane(dir, `${process.execPath} ${BIN} chat --model ${model}`);
    try {
      await t.until(/new ›/);
      t.keys("hi there", "Enter");
      await t.until(/Hello! What shall we do\?[\s\S]*›\s*$/m);
      t.resize(100, 30);
      t.keys("write the file", "Enter");
      await t.until(/Done: hello\.txt\.[\s\S]*›\s*$/m);
      t.keys("count please", "Enter");
      await t.until(/⋯ run running \d+\.\d s │ tick\d/);
      t.keys("C-c");
      const cancelled = await t.until(/■ cancelled/);
      expect(cancelled).toMatch(/✗ run interrupted/);
      // the conversation goes on after the cancelled turn
      t.keys("and now?", "Enter");
      await t.until(/Counted\.|Reply six\./);
      // at the prompt: Ctrl-C on an empty line says how to leave, the second leaves
      await t.until(/›\s*$/m);
      t.keys("C-c");
      await t.until(/Ctrl-C again, Ctrl-D or \/exit to leave/);
      t.keys("C-c");
      const last = await t.until(/EXIT=\d+/);
      expect(last).toMatch(/left \w+@main at event \d+/);
    } finally {
      t.close();
    }
    // the cancellation is in the log: the run stopped as cancelled, then went on
    const log = json<LogDoc>(await strata(dir, ["log", "@last", "--limit", "0", "--json"]));
    expect(log.events.filter((e) => e.label === "turn.user")).toHaveLength(4);
    expect(log.events.some((e) => e.label === "call.interrupted" || e.label === "call.outcome")).toBe(true);
    const shown = await strata(dir, ["show", "@last", "--select", "stop", "--xml"]);
    expect(shown.stdout).toMatch(/reason="cancelled"/);
  }, 120_000);

  it("pasted lines are one message, sent by the Enter after them; Ctrl-C throws a half-written one away", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    const t = pane(dir, `${process.execPath} ${BIN} chat --model ${model}`);
    try {
      await t.until(/new ›/);
      t.paste("first pasted line\nsecond pasted line\nthird");
      await t.until(/… third/);
      await sleep(300);
      expect(t.screen()).not.toMatch(/^assistant/m); // nothing sent before Enter
      t.keys(" and more", "Enter");
      await t.until(/Hello! What shall we do\?[\s\S]*›\s*$/m);
      // a continued line (ending in \), then Ctrl-C: nothing of it is sent
      t.keys("never \\", "Enter");
      await t.until(/^ +…\s*$/m);
      t.keys("C-c");
      // a paste, then Ctrl-C with half of its last line: all of it goes
      t.paste("pasted away\nand this");
      await t.until(/… and this/);
      t.keys("C-c");
      // Ctrl-C with the cursor inside the line throws the whole line away
      t.keys("abc", "Left", "Left");
      await sleep(200);
      t.keys("C-c");
      await sleep(200);
      t.keys("/exit", "Enter");
      await t.until(/EXIT=\d+/);
    } finally {
      t.close();
    }
    const log = json<LogDoc>(await strata(dir, ["log", "@last", "--limit", "0", "--json"]));
    expect(log.events.filter((e) => e.label === "turn.user")).toHaveLength(1);
    const sent = await strata(dir, ["show", "@last", "--select", "turn[role=user] > text", "--json"]);
    expect(json<{ elements: { text: string }[] }>(sent).elements.map((e) => e.text)).toEqual([
      "first pasted line\nsecond pasted line\nthird and more",
    ]);
  }, 120_000);

  it("-r picks a session on the terminal: recent first, typing filters, Enter opens it", async () => {
    const dir = tempDir();
    const model = chatScript(dir);
    expect((await strata(dir, ["chat", "--model", model, "--title", "alpha work"], { input: "hi\n" })).code).toBe(0);
    expect((await strata(dir, ["chat", "--model", model, "--title", "beta work"], { input: "hi\n" })).code).toBe(0);
    const t = pane(dir, `${process.execPath} ${BIN} chat -r`);
    try {
      const list = await t.until(/beta work[\s\S]*alpha work/);
      expect(list).toMatch(/session to chat/);
      t.keys("alpha");
      await t.until(/alpha work/);
      // the highlighted session's id and the directory it works in, under the list
      await t.until(new RegExp(`[0-9A-Z]{26} +· +workspace ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      await sleep(300);
      expect(t.screen()).not.toMatch(/beta work/);
      t.keys("Enter");
      await t.until(/chat \w+ \(/);
      await t.until(/›\s*$/m);
      t.keys("/session", "Enter");
      await t.until(/branch main · head \d+/);
      t.keys("C-d");
      await t.until(/EXIT=0/);
    } finally {
      t.close();
    }
    // Esc leaves the picker (resume with no session): exit 0, nothing resumed
    const esc = pane(dir, `${process.execPath} ${BIN} resume`);
    try {
      await esc.until(/session to resume/);
      esc.keys("Escape");
      await esc.until(/EXIT=0/);
      expect(esc.screen()).not.toMatch(/resuming/);
    } finally {
      esc.close();
    }
  }, 120_000);
});
