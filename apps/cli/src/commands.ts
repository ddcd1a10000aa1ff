/**
 * The command table (CLI-1): what every command is — its name, usage, options and help — without
 * its code. `strata --help`, `strata help X` and argument parsing read only this; a command's
 * implementation (and the packages it needs: the store, the template engine, ajv, the model
 * clients, the inspector) is loaded when that command runs.
 */
import { type Command, LAST_OPTION, type OptionSpec } from "./command.ts";

type Defaults = "run" | "resume" | "chat";

/** The run options; their help states the defaults the command really uses. */
function runOptions(d: Defaults): Record<string, OptionSpec> {
  const rec = (fresh: string): string =>
    d === "resume"
      ? "the one the session recorded"
      : d === "chat"
        ? `${fresh}; for a session given: the recorded one`
        : `${fresh}; with --session: the recorded one`;
  return {
    model: {
      type: "string",
      value: "SPEC",
      description: `scripted:FILE.json or openai:MODEL (default: ${rec(d === "chat" ? "$STRATA_MODEL; a new chat needs one" : "$STRATA_MODEL, else the offline demo in its own workspace")})`,
    },
    workspace: {
      type: "string",
      value: "DIR",
      description: `the directory the tools may touch (default: ${rec(d === "chat" ? "the current directory" : "the current directory; the offline demo plays in .strata/demo")})`,
    },
    template: {
      type: "string",
      value: "FILE",
      description: `the system prompt template (default: ${rec("strata's built-in one")}, re-read if it changed on disk)`,
    },
    context: {
      type: "string",
      value: "FILE",
      multiple: true,
      description: `a context file for the prompt, inside the workspace (default: ${rec("AGENTS.md if present")})`,
    },
    "max-steps": { type: "string", value: "N", description: `model turns before the run stops, at least 1 (default: ${rec("30")})` },
    budget: { type: "string", value: "TOKENS", description: `stop once the run has used this many tokens (default: ${rec("none")})` },
    temperature: { type: "string", value: "T", description: "sampling temperature from 0 to 2, recorded with the model settings" },
  };
}

const run: Command = {
  name: "run",
  summary: "start a session (or continue one with a new task) and drive the agent",
  usage: "strata run [TASK] [--session SESSION[@BRANCH] | --last] [--model SPEC] [--workspace DIR] [--template FILE] [--max-steps N]",
  description: [
    "Prints the session's handle and the workspace first, then streams what happens: the assistant's text, each tool call and its outcome (with the running call's time and latest output on a terminal), and why the run stopped.",
    "With a model (--model or $STRATA_MODEL) the current directory is the workspace unless --workspace says otherwise. With no model configured it plays the offline demo script (fixtures/models/demo.json, no TASK) in a fresh copy of the demo workspace at .strata/demo, never in your files.",
    "Ctrl-C cancels cleanly; the session stays resumable. -q prints only HANDLE@BRANCH STOP at the end.",
  ].join("\n"),
  examples: [
    "strata run                                 # the offline demo, in .strata/demo",
    'strata run "fix the failing test" --model openai:gpt-4o-mini',
    'strata run "now add docs" --last',
    'strata run "try it another way" --session 6CPD71@alt',
  ],
  options: {
    ...runOptions("run"),
    session: { type: "string", value: "SESSION", description: "continue this session (SESSION or SESSION@BRANCH) instead of starting one" },
    last: { ...LAST_OPTION, description: "continue the most recently active session (same as --session @last)" },
    title: { type: "string", value: "TITLE", description: "the new session's title (default: the task)" },
  },
  positionals: { min: 0, max: 1 },
  json: true,
  load: () => import("./commands/agent.ts").then((m) => m.run),
};

const chat: Command = {
  name: "chat",
  summary: "talk to the agent: a conversation in the terminal, one run per message",
  usage: "strata chat [SESSION[@BRANCH] | -c | -r] [--model SPEC] [--workspace DIR] [--title TITLE]",
  description: [
    "Type a message; the reply streams, tool calls show as they run (elapsed time, output tail), and the conversation goes on with the next message. Each message is one run of the agent loop on the branch (as `strata run TASK --session` would do), so the chat is resumable wherever it is killed. Without SESSION, -c or -r the first message creates a new session (a model must be configured: --model or $STRATA_MODEL).",
    "Ctrl-C cancels the current turn (recorded as cancelled; the session stays); a second Ctrl-C in the same turn quits. At the prompt Ctrl-C clears the line, twice on an empty line leaves, as do Ctrl-D and /exit.",
    "Slash commands drive the session: /fork [NAME], /switch BRANCH, /branches, /rewind EVENT, /undo (the last message and what it did, files included), /prompt, /diff [EVENT], /tree, /files, /log, /session, /help. A message that starts with / is written //; a line ending in \\ goes on on the next, and pasted lines are one message.",
    "With stdin not a terminal every line is a message (slash commands too), so a chat can be scripted; the exit code is the last turn's: 0 completed, 1 failed or stopped, 130 cancelled.",
  ].join("\n"),
  examples: [
    "strata chat --model openai:gpt-4o-mini",
    "strata chat -c                              # the most recently active session",
    "strata chat -r                              # pick one (type to filter)",
    "strata chat 6CPD71@alt",
    'printf "add a test\\n/diff\\n" | strata chat @last',
  ],
  options: {
    ...runOptions("chat"),
    continue: { type: "boolean", short: "c", description: "continue the most recently active session (same as giving @last)" },
    resume: { type: "boolean", short: "r", description: "pick the session on the terminal: recent first, type to filter" },
    title: { type: "string", value: "TITLE", description: "the new session's title (default: the first message)" },
  },
  positionals: { min: 0, max: 1 },
  json: false,
  load: () => import("./commands/chat.ts").then((m) => m.chat),
};

const resume: Command = {
  name: "resume",
  summary: "reopen a session, say what was interrupted, and continue it",
  usage: "strata resume [SESSION[@BRANCH]] [--model SPEC] [--max-steps N]",
  description:
    "Without SESSION on a terminal, a picker offers the sessions (recent first, type to filter). Takes the branch (exit 3 if another process drives it), materializes its head, prints the lifecycle work (calls that will run, re-run or be marked interrupted), records any change to the template or context files on disk as a patch, and continues the agent loop. Every input defaults to what the session recorded — model, workspace, template, context files, limits; a flag replaces one. An imported session's recorded paths are never followed: give --workspace, and its recorded template and context copies are used.",
  examples: [
    "strata resume @last",
    "strata resume            # pick one on a terminal",
    "strata resume 6CPD71@alt --model scripted:fixtures/models/alt.json",
  ],
  options: runOptions("resume"),
  positionals: { min: 0, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/agent.ts").then((m) => m.resume),
};

const ls: Command = {
  name: "ls",
  summary: "list sessions",
  usage: "strata ls [--all | --archived] [--limit N]",
  description:
    "Sessions, most recently active first: handle (what every command accepts as SESSION), title, branches, events on main, last activity and status. -q prints only the whole ids, one per line (for scripts). --limit N lists the N most recently active, found in one query however many sessions the database holds. Archived sessions (`strata archive`) are left out unless --archived (only them) or --all (everything).",
  examples: ["strata ls", "strata ls --limit 10", "strata ls --all --json", "strata ls --archived", "strata ls -q | head -1"],
  options: {
    all: { type: "boolean", description: "also list archived sessions, and each session's branches, abandoned ones included" },
    archived: { type: "boolean", description: "list only archived sessions" },
    limit: { type: "string", value: "N", description: "only the N most recently active sessions (default: all)" },
  },
  positionals: { min: 0, max: 0 },
  json: true,
  load: () => import("./commands/ls.ts").then((m) => m.ls),
};

const search: Command = {
  name: "search",
  summary: "find events by the words of their messages, tool calls and outputs",
  usage: "strata search TEXT... [--session SESSION] [--limit N] [--before EVENT]",
  description:
    "Every word must be in an event's text (case does not matter; a word is a run of letters and digits, so read_file, src/a.ts and 2026-11-02 each match those words in order); \"…\" is a phrase. Hits are newest first as HANDLE@EVENT — an address show, prompt, fork and rewind take — with the time, the event's label and the text around the match. --before pages on: the last line of a page prints the command for the next. The index is kept at append time on SQLite (FTS5) and PostgreSQL (tsvector); a database written by an older strata is indexed once on the first search, with progress. No hit is not an error (exit 0); -q prints only the addresses.",
  examples: [
    "strata search planning notes",
    "strata search '\"open questions\"' --session @last",
    "strata search read_file --limit 5 --json",
    "strata search deploy --before 1234",
  ],
  options: {
    session: { type: "string", value: "SESSION", description: "only this session's events (a handle, an id prefix or @last)" },
    limit: { type: "string", value: "N", description: "at most N hits (default 20, at most 1000)" },
    before: { type: "string", value: "EVENT", description: "only events older than this one (the next page)" },
  },
  positionals: { min: 1, max: 64 },
  json: true,
  load: () => import("./commands/search.ts").then((m) => m.search),
};

const log: Command = {
  name: "log",
  summary: "show a branch's events",
  usage: "strata log SESSION[@BRANCH] [--label GLOB] [--limit N]",
  description:
    "Events of a branch, oldest first: id, time, label, cause and a summary of the ops. Fork and rewind points are marked, and so is every event that changed files: files:+ADDED ~MODIFIED -DELETED.",
  examples: ["strata log @last", "strata log 6CPD71@alt --label 'tool.*' --limit 20", "strata log 6CPD71 --json"],
  options: {
    label: { type: "string", value: "GLOB", description: "only events whose label matches (* matches anything)" },
    limit: { type: "string", value: "N", description: "the last N events (default 100; 0 for all)" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/read.ts").then((m) => m.log),
};

const show: Command = {
  name: "show",
  summary: "show the tree at any event",
  usage: "strata show SESSION[@BRANCH|@EVENT][~N] [--at EVENT] [--select CSS] [--xml | --tree] [--depth N] [--files]",
  description:
    "The materialized tree at an event (default: the branch head), or only the elements a selector matches. --files lists the workspace the event records instead: path, mode, size and short hash of every file, and the branch's working directory.",
  examples: [
    "strata show @last",
    "strata show 6CPD71 --at 57 --select 'call[status=running]'",
    "strata show 6CPD71@alt~3 --xml",
    "strata show 6CPD71 --json",
    "strata show 6CPD71@40 --files",
  ],
  options: {
    at: { type: "string", value: "EVENT", description: "an event id, or head~N for N events before the head" },
    select: { type: "string", value: "CSS", description: "only the elements matching this selector" },
    xml: { type: "boolean", description: "canonical XML (ids included)" },
    tree: { type: "boolean", description: "an indented view (the default)" },
    depth: { type: "string", value: "N", description: "levels to show in the tree view (default all)" },
    files: { type: "boolean", description: "the workspace at the event: path, mode, size and hash of each file" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/read.ts").then((m) => m.show),
};

const diff: Command = {
  name: "diff",
  summary: "compare two events or branches, files included",
  usage: "strata diff A B",
  description: [
    "The structural difference from A to B (each SESSION@EVENT, SESSION@BRANCH or SESSION@BRANCH~N): elements added, removed, changed and moved, with before and after.",
    "Then the files: each file added, modified or deleted between the workspaces A and B record, with a unified diff for a text file and sizes and hashes for anything else (binary, larger than 256 KiB, a symlink).",
  ].join("\n"),
  examples: ["strata diff 6CPD71@main 6CPD71@alt", "strata diff @last@40 @last@57 --json"],
  options: {},
  positionals: { min: 2, max: 2 },
  json: true,
  load: () => import("./commands/read.ts").then((m) => m.diff),
};

const branches: Command = {
  name: "branches",
  summary: "list a session's branches",
  usage: "strata branches SESSION",
  description: "Every branch of a session with its head, length and origin (a fork, or a head kept by a rewind). -q prints the names only.",
  examples: ["strata branches @last", "strata branches 6CPD71 --json"],
  options: {},
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/read.ts").then((m) => m.branches),
};

const cost: Command = {
  name: "cost",
  summary: "tokens and cost per branch, the history a fork shares counted once",
  usage: "strata cost SESSION[@BRANCH] [--prices FILE]",
  description: [
    "For each branch: the tokens it inherits from its fork point, the tokens its own events added, and its total; then the session's distinct total, every event counted once however many branches share it (never the sum of the branches). By model too, with cache and reasoning tokens when the session records them (imported sessions), and the cost a source recorded.",
    'With prices, each in US dollars: a JSON file {"models": {"MODEL": {"input": USD, "output": USD, "cacheRead": USD, "cacheWrite": USD}}} of dollars per million tokens, from --prices FILE, else $STRATA_PRICES, else prices.json beside the database. A model is found by its id as the session records it (openai:gpt-4o-mini), else by the name after its provider (gpt-4o-mini). A model without a price is shown as unpriced, never guessed; without prices, tokens only.',
    "Reads the events' payloads, no tree: a long session with forks costs one read of its events. SESSION@BRANCH shows that branch alone (the session's total is still every branch's). -q prints BRANCH TOKENS [COST] per line.",
  ].join("\n"),
  examples: ["strata cost @last", "strata cost 6CPD71@alt --prices prices.json", "STRATA_PRICES=~/prices.json strata cost 6CPD71 --json"],
  options: {
    prices: {
      type: "string",
      value: "FILE",
      description: "US dollars per million tokens, per model (default: $STRATA_PRICES, else prices.json beside the database if there)",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/cost.ts").then((m) => m.cost),
};

const prompt: Command = {
  name: "prompt",
  summary: "the exact request the model saw (or would see) at any event",
  usage: "strata prompt SESSION[@BRANCH|@EVENT] [--at EVENT] [--diff EVENT2]",
  description:
    "Re-renders the request (system prompt, history, tools, model settings) as a projection of the tree at that event, from the recorded template and context files — byte-identical to what was sent then. --diff shows how it changed between two events. EVENT and EVENT2 are event ids, head, or head~N (N events before the branch head).",
  examples: ["strata prompt @last", "strata prompt 6CPD71 --at 42 --json", "strata prompt 6CPD71@31 --diff head"],
  options: {
    at: {
      type: "string",
      value: "EVENT",
      description: "an event id on the branch, or head~N (default: the one the address names, else the head)",
    },
    diff: { type: "string", value: "EVENT2", description: "compare with the prompt at this event (an id, head, or head~N)" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/prompt.ts").then((m) => m.prompt),
};

const fork: Command = {
  name: "fork",
  summary: "branch a session at any event, with a working directory of its own",
  usage: "strata fork SESSION@EVENT [--name NAME] [--workspace DIR]",
  description: [
    "Creates a branch whose head is the event (one row; nothing is copied) and prints what a session continued there would have to start or stop.",
    "The branch gets its own working directory, so two branches never share one: DIR (new or empty), by default <database dir>/workspaces/<handle>/<branch>. The files of the fork point are checked out there, and the branch's first event records the directory (workspace.dir). A fork point before the run recorded its files gets the files of that line's baseline — no tool that writes had run before it (workspace.baseline).",
  ].join("\n"),
  examples: ["strata fork 6CPD71@57 --name try-2", "strata fork @last@main~3", "strata fork 6CPD71@57 --name big --workspace ../big-try"],
  options: {
    name: {
      type: "string",
      value: "NAME",
      description: "the new branch's name: letters, digits and . _ / - (default fork-EVENT)",
    },
    workspace: {
      type: "string",
      value: "DIR",
      description: "the branch's working directory, new or empty (default <database dir>/workspaces/<handle>/<branch>)",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/history.ts").then((m) => m.fork),
};

const rewind: Command = {
  name: "rewind",
  summary: "move a branch back to an earlier event, files included",
  usage: "strata rewind SESSION[@BRANCH] --to EVENT [--force]",
  description: [
    "Moves the branch head back; the abandoned head stays as branch rewound/BRANCH/HEAD, so nothing is lost. Prints the lifecycle work: calls, jobs and subagents to stop or start, and the files to restore.",
    "The branch's working directory is restored to the files at EVENT. First it is compared with what the head records: a file changed outside the agent (an editor, a git checkout) is refused with the list of paths and exit 3 — unless --force, which records that change as its own event (workspace.outside) before restoring, so `strata checkout` of that event brings it back.",
  ].join("\n"),
  examples: ["strata rewind 6CPD71 --to 40", "strata rewind @last@try-2 --to head~2 --json", "strata rewind 6CPD71 --to 40 --force"],
  options: {
    to: { type: "string", value: "EVENT", description: "an event id on the branch, or head~N for N events before the head" },
    force: {
      type: "boolean",
      description: "restore even over files changed outside the agent, recording that change first as its own event",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/history.ts").then((m) => m.rewind),
};

const checkout: Command = {
  name: "checkout",
  summary: "write the workspace as it was after any event into a directory",
  usage: "strata checkout SESSION[@BRANCH|@EVENT][~N] --to DIR [--force]",
  description: [
    "Writes the files the session recorded at the event (default: the branch head) into DIR: byte-identical contents, modes (executable or not), symlinks as links, and no file the record does not have. The bytes come from the database; any event of any branch works, rewound heads and imported sessions included.",
    "DIR must not exist or be empty. With --force it may hold files: it is made to hold exactly the workspace (files the record does not have are removed; ignored ones, .git and .strata are left alone). Only the database is read.",
  ].join("\n"),
  examples: [
    "strata checkout 6CPD71@40 --to /tmp/at-40",
    "strata checkout @last@alt --to ../alt-files --json",
    "strata checkout 6CPD71@rewound/main/57 --to ws --force",
  ],
  options: {
    to: { type: "string", value: "DIR", description: "the directory to write (new or empty unless --force)" },
    force: { type: "boolean", description: "write into a directory that has files: it ends up holding exactly the workspace" },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/checkout.ts").then((m) => m.checkout),
};

const bisect: Command = {
  name: "bisect",
  summary: "find the first event after which a condition holds: a selector matches, a file exists or matches",
  usage: "strata bisect SESSION[@BRANCH] (--until CSS | --until-file PATH[~REGEX]) …",
  description: [
    "Binary search over the branch: materializes O(log n) states and reports the first event after which every condition holds (assuming that, once true, it stays true), with that event's diff and file changes. -q prints only the event id (for scripts: strata rewind S --to $(strata bisect S --until … -q)).",
    "--until CSS: a selector matches an element of the tree. --until-file PATH: the workspace the event records has the file; PATH~REGEX: and its content matches the regular expression (JavaScript syntax; PATH~/REGEX/i for flags i, m, s, u; the path is everything before the first ~). Conditions can be repeated and combined: all must hold.",
  ].join("\n"),
  examples: [
    "strata bisect @last --until 'call[status=env_error]'",
    "strata bisect 6CPD71@try-2 --until 'todo item[status=completed]' --json",
    "strata bisect @last --until-file SUMMARY.md",
    "strata bisect @last --until-file 'src/app.ts~/TODO|FIXME/i'",
  ],
  options: {
    until: { type: "string", value: "CSS", description: "a selector that starts matching" },
    "until-file": {
      type: "string",
      multiple: true,
      value: "PATH[~REGEX]",
      description: "a file that starts to exist in the workspace (with ~REGEX: whose content starts to match); repeatable",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/check.ts").then((m) => m.bisect),
};

const replay: Command = {
  name: "replay",
  summary: "prove replay equals the stored states, or re-run a branch deterministically",
  usage: "strata replay SESSION[@BRANCH] (--verify | --rerun | --override llm:CALL=FILE|tool:CALL=FILE …)",
  description: [
    "--verify replays the branch from genesis with no snapshot and compares it with every snapshot on the chain and with the head as a reopen builds it; it reports the first event where they differ. It then re-renders every request the model was sent on the branch from the tree and compares it with the hash recorded on its turn: a mismatch names the event and the part (system, tools, settings, messages) and shows the difference.",
    "--rerun forks the branch before its first user turn and drives the loop again: recorded model replies, `safe` tools re-executed for real, `never` tools answered from the recording. It reports the first reply or observation that differs (exit 1 when one does).",
    "--override makes that re-run a counterfactual: llm:CALL=FILE replaces the model reply that made call CALL with FILE (JSON {text, toolCalls:[{name, arguments}]}); tool:CALL=FILE replaces that call's observation with FILE's text. Every override is recorded in the new branch.",
    "A session imported from another tool (import --from) calls that tool's tools, which strata does not have: its re-run answers every call from the recording and runs nothing.",
  ].join("\n"),
  examples: [
    "strata replay @last --verify",
    "strata replay 6CPD71 --rerun --json",
    "strata replay 6CPD71 --override tool:call_1_0=notes-v2.md --name what-if-notes",
  ],
  options: {
    verify: { type: "boolean", description: "replay from genesis and compare with the stored states" },
    rerun: { type: "boolean", description: "re-run the branch on a new branch and report the first divergence" },
    override: {
      type: "string",
      multiple: true,
      value: "KIND:CALL=FILE",
      description: "a counterfactual input (llm: or tool:), repeatable; implies --rerun",
    },
    name: { type: "string", value: "NAME", description: "the re-run branch's name (default rerun/BRANCH or whatif/BRANCH)" },
    workspace: {
      type: "string",
      value: "DIR",
      description:
        "where the re-run plays: a new or empty directory that gets the recorded files (default <database dir>/workspaces/<handle>/<branch>); for a session that records no files, where its safe tools run (default: the recorded workspace; required for a session imported from a bundle; unused for one imported from another tool, whose calls are all answered from the recording)",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/check.ts").then((m) => m.replay),
};

const exportCmd: Command = {
  name: "export",
  summary: "write a session as a self-contained bundle on stdout",
  usage: "strata export SESSION [--branch B] > FILE",
  description:
    "The bundle is one JSON document (strata-bundle@2): events with their digests, branches, the blobs they refer to, and each head as readable XML. `strata import FILE` brings it back, history intact, and verifies it. With --branch B only B's history is exported (the bundle's main is then the session's genesis event).",
  examples: ["strata export @last > session.strata.json", "strata export 6CPD71 --branch try-2 > try-2.json"],
  options: {},
  positionals: { min: 1, max: 1 },
  json: false,
  load: () => import("./commands/bundle.ts").then((m) => m.exportCmd),
};

const importCmd: Command = {
  name: "import",
  summary: "bring a bundle in as a new session and verify it, or import other tools' sessions (--from)",
  usage: "strata import FILE | strata import --from claude-code|codex|pi|opencode PATH…",
  description: [
    "Checks every field of the bundle first (types, ranges, references, digests, and a replay of every event against the heads' XML), then creates a new session with its events and branches in one transaction (event ids are new; the original session id is kept in the metadata as importedFrom) and verifies every head again in the database. Blobs nothing refers to are dropped and listed. A bundle that fails any check leaves the database untouched (exit 1).",
    "With --from, each PATH is a session file another tool recorded, or a directory of them: every session found becomes a new strata session (one transaction each) whose tree holds its turns, tool calls and results, model and usage, with the source's timestamps and its branches (sidechains, edits) as branches; the source file is kept verbatim as a blob. A Claude Code 2.x session's directory beside its file (<session>/subagents/agent-*.jsonl, <session>/tool-results/) is part of it: each sub-agent transcript is a branch agent-<id>, and every file is kept verbatim. A file imported before (the same sha256) is skipped. In a directory, a file that holds no session of the format (every line JSON, none a session record: the tool's history.jsonl, a file of summaries only) is listed as ignored, not failed; named on its own it is a failure. Lines that cannot be read are listed with file and line (the rest is imported); a format version strata does not know is a failure naming it (exit 1). Progress on stderr for many files.",
    "For opencode, PATH is ~/.local/share/opencode (its opencode.db is read, read-only), a legacy storage/ directory (each session: its files as one blob), one storage/session/<project>/<ses>.json, an opencode.db, or a file `opencode export` wrote; an /undo is a branch `reverted`, a task tool's child session a session of its own. `strata replay --rerun` of an imported session answers its calls from the recording.",
  ].join("\n"),
  examples: [
    "strata import session.strata.json",
    "strata import session.strata.json --db other.db --json",
    "strata import --from claude-code ~/.claude/projects/-home-me-proj/",
    "strata import --from claude-code 5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl --json",
    "strata import --from opencode ~/.local/share/opencode",
  ],
  options: {
    from: {
      type: "string",
      value: "FORMAT",
      description:
        "import sessions recorded by another tool: claude-code, codex, pi or opencode (PATH: a session file or a directory; for opencode also an opencode.db)",
    },
  },
  positionals: { min: 0, max: Number.MAX_SAFE_INTEGER },
  json: true,
  load: () => import("./commands/bundle.ts").then((m) => m.importCmd),
};

const rename: Command = {
  name: "rename",
  summary: "give a session a new title",
  usage: "strata rename SESSION TITLE",
  description: "Replaces the session's title (what `strata ls` shows); nothing else changes. An empty TITLE clears it.",
  examples: ['strata rename 6CPD71 "fix the flaky test"', 'strata rename @last ""'],
  options: {},
  positionals: { min: 2, max: 2 },
  takesSession: true,
  json: true,
  load: () => import("./commands/manage.ts").then((m) => m.rename),
};

const rm: Command = {
  name: "rm",
  summary: "remove whole sessions: every branch, event and snapshot",
  usage: "strata rm SESSION... [--yes] [--dry-run]",
  description: [
    "Removes each session whole — all its branches (kept rewound heads too), events, snapshots, leases and search entries — in one transaction per session: killed at any moment, a session is either whole or gone. There is no undo (`strata archive` hides a session instead; `strata export` keeps a copy).",
    "On a terminal it shows what will go (title, branches, events) and asks; --yes does not ask. Without a terminal --yes is required (exit 2, nothing removed). A session another process is driving right now is refused (exit 3) and nothing is removed. Blobs (file contents, tool outputs, snapshot pages) stay until `strata gc`.",
  ].join("\n"),
  examples: ["strata rm 6CPD71", "strata rm 6CPD71 9QW2ZK --yes", "strata rm @last --dry-run --json"],
  options: {
    yes: { type: "boolean", short: "y", description: "remove without asking" },
    "dry-run": { type: "boolean", description: "show what would be removed and remove nothing" },
  },
  positionals: { min: 1, max: 100 },
  takesSession: true,
  json: true,
  load: () => import("./commands/manage.ts").then((m) => m.rm),
};

const archive: Command = {
  name: "archive",
  summary: "hide sessions from ls and @last (reversible; nothing is removed)",
  usage: "strata archive SESSION... [--undo]",
  description:
    "Marks each session archived: `strata ls`, `@last` and the session picker leave it out, `strata ls --archived` (or --all) lists it, and every command still takes it by handle or id. Nothing of the session changes or goes. --undo brings sessions back.",
  examples: ["strata archive 6CPD71 9QW2ZK", "strata archive --undo 6CPD71", "strata ls --archived"],
  options: {
    undo: { type: "boolean", description: "unarchive: list the sessions again" },
  },
  positionals: { min: 1, max: 100 },
  takesSession: true,
  json: true,
  load: () => import("./commands/manage.ts").then((m) => m.archive),
};

const gc: Command = {
  name: "gc",
  summary: "reclaim blobs no session refers to any more",
  usage: "strata gc [--dry-run]",
  description: [
    "Deletes the blobs — file contents, tool outputs, texts, snapshot pages — that no remaining session or branch reaches (what `strata rm` left behind), and prints how many and how many bytes. Everything a session can still read is kept. --dry-run only counts.",
    "It runs in one write transaction: other writers wait for it. It is refused (exit 3) while another process drives a session, since a running agent may hold blobs it has stored but not yet recorded. On SQLite it then returns the freed pages to the file system (VACUUM); on PostgreSQL autovacuum does.",
  ].join("\n"),
  examples: ["strata gc --dry-run", "strata gc", "strata gc --json"],
  options: {
    "dry-run": { type: "boolean", description: "count what would be reclaimed and delete nothing" },
  },
  positionals: { min: 0, max: 0 },
  json: true,
  load: () => import("./commands/manage.ts").then((m) => m.gc),
};

const verify: Command = {
  name: "verify",
  summary: "check the database's integrity",
  usage: "strata verify [SESSION]",
  description:
    "SQLite's own check, every chain link and depth, branch heads, blob hashes, every payload decodes, and every snapshot equals the replay of its chain. Exits 1 on any finding.",
  examples: ["strata verify", "strata verify 6CPD71 --json"],
  options: {},
  positionals: { min: 0, max: 1 },
  takesSession: true,
  json: true,
  load: () => import("./commands/check.ts").then((m) => m.verify),
};

const serve: Command = {
  name: "serve",
  summary: "the web inspector: timeline, tree at any event, diffs, prompts, live sessions",
  usage: "strata serve [--port N] [--host H] [--token T]",
  description:
    "Serves the inspector on http://127.0.0.1:7357 (read-only: no endpoint changes a session). Binding to any other address needs a token: give one with --token or one is generated and printed; every request must carry it. JSON endpoints under /api/, and the live patch stream as Server-Sent Events: curl -N 'http://127.0.0.1:7357/api/sessions/SESSION/stream?from=EVENT'.",
  examples: ["strata serve", "strata serve --port 8080", "strata serve --host 0.0.0.0   # prints a URL with a token"],
  options: {
    port: { type: "string", value: "N", description: "the port (default 7357; 0 picks a free one)" },
    host: { type: "string", value: "H", description: "the address to bind (default 127.0.0.1)" },
    token: { type: "string", value: "T", description: "the token every request must carry (required off loopback; generated if absent)" },
  },
  positionals: { min: 0, max: 0 },
  json: true,
  load: () => import("./commands/serve.ts").then((m) => m.serve),
};

export const COMMANDS: readonly Command[] = [
  run,
  chat,
  resume,
  ls,
  search,
  log,
  show,
  diff,
  branches,
  cost,
  prompt,
  fork,
  rewind,
  checkout,
  bisect,
  replay,
  exportCmd,
  importCmd,
  rename,
  rm,
  archive,
  gc,
  verify,
  serve,
];
