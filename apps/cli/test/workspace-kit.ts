/** What the workspace tests compare: a directory's files as data (contents, modes, links), and a scripted session that changes them. */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** A file as a test compares it: its bytes (a link: its target) and its mode. */
export interface Seen {
  readonly mode: "644" | "755" | "link";
  readonly bytes: string;
}

/** Every file and link below `dir` (sorted by path), skipping the top-level names in `skip`. */
export function filesOf(dir: string, skip: readonly string[] = []): Record<string, Seen> {
  const out: Record<string, Seen> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel === "" ? name : `${rel}/${name}`;
      if (rel === "" && skip.includes(name)) continue;
      const abs = join(dir, path);
      const st = lstatSync(abs);
      if (st.isDirectory()) walk(path);
      else if (st.isSymbolicLink()) out[path] = { mode: "link", bytes: readlinkSync(abs) };
      else out[path] = { mode: (st.mode & 0o100) !== 0 ? "755" : "644", bytes: readFileSync(abs).toString("latin1") };
    }
  };
  walk("");
  return out;
}

const file = (bytes: string, mode: "644" | "755" = "644"): Seen => ({ mode, bytes });

/** The workspace before the run: tracked notes, an ignore file, and an ignored build output. */
export const START: Record<string, string> = { "notes.md": "keep\n", ".gitignore": "build/\n", "build/out.o": "\u0000ignored" };

/**
 * The script's tool calls, one per model turn, and the workspace after each (ignored files left
 * out): writes, a shell command making an executable and a symlink, an edit, a shell delete and a
 * binary file, a rewrite.
 */
export const STEPS: readonly { call: { name: string; arguments: Record<string, unknown> }; after: Record<string, Seen> }[] = (() => {
  const m0: Record<string, Seen> = { ".gitignore": file("build/\n"), "notes.md": file("keep\n") };
  const m1 = { ...m0, "a.txt": file("one\n") };
  const m2 = { ...m1, "bin/hi.sh": file("#!/bin/sh\necho hi\n", "755"), link: { mode: "link" as const, bytes: "a.txt" } };
  const m3: Record<string, Seen> = { ...m2, "a.txt": file("two\n") };
  const m4: Record<string, Seen> = { ...m3, "data.bin": file("\u0000\u0001\u0002\u00ff") };
  delete m4["notes.md"];
  const m5 = { ...m4, "a.txt": file("three\n") };
  return [
    { call: { name: "write_file", arguments: { path: "a.txt", content: "one\n" } }, after: m1 },
    {
      call: {
        name: "run",
        arguments: { command: "mkdir -p bin && printf '#!/bin/sh\\necho hi\\n' > bin/hi.sh && chmod +x bin/hi.sh && ln -s a.txt link" },
      },
      after: m2,
    },
    { call: { name: "edit_file", arguments: { path: "a.txt", old: "one", new: "two" } }, after: m3 },
    { call: { name: "run", arguments: { command: "rm notes.md && printf '\\000\\001\\002\\377' > data.bin" } }, after: m4 },
    { call: { name: "write_file", arguments: { path: "a.txt", content: "three\n" } }, after: m5 },
  ];
})();

/** The workspace as the baseline records it. */
export const BASELINE: Record<string, Seen> = { ".gitignore": file("build/\n"), "notes.md": file("keep\n") };

/** The model turns of the script: each step's call, then a submit. */
export function turns(): unknown[] {
  return [
    ...STEPS.map((s, i) => ({ text: `Step ${i + 1}.`, toolCalls: [s.call] })),
    { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "five steps" } }] },
  ];
}
