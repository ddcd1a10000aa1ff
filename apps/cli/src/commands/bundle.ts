/**
 * `export` and `import` (CLI-23): thin wrappers over the engine's bundles (EN-32). `export` writes
 * `exportBundle`'s document on stdout; `import` reads a file, checks every field of it with
 * `parseBundle` before it opens (or creates) the database, and imports it with `importBundle` in
 * one transaction. A file that cannot be read is a usage error (exit 2); a file that is not a valid
 * bundle, or does not verify, is a failure (exit 1, CLI-2: a damaged or foreign file) and leaves
 * the database exactly as it was.
 *
 * `import --from FORMAT PATH…` imports sessions other tools recorded (docs/spec/import.md): it loads
 * `@strata/import` only then, so a bundle import does not pay for it. Exit 1 when a source could
 * not be imported at all (an unknown format version, a file that is no session); lines that could
 * not be read are listed with file and line and do not fail the import (the rest of the file is in).
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { type Bundle, BundleError, exportBundle, exportBundleFrom, importBundle, importBundleInto, parseBundle } from "@strata/engine";
import { type AsyncStore, isAsyncStore, type SessionInfo } from "@strata/store";
import { findSession } from "../address.ts";
import { type Args, type CommandImpl, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { handlesOf } from "../sessions.ts";
import { jsonText } from "../terminal.ts";

/** The largest bundle file `import` reads (about the longest string JavaScript can hold). */
export const MAX_BUNDLE_FILE_BYTES = 512 * 1024 * 1024;

export const exportCmd: CommandImpl = {
  async run(ctx, args) {
    const options = { ...(ctx.branch === undefined ? {} : { branch: ctx.branch }), progress: (m: string) => ctx.out.progress(m) };
    let s: SessionInfo;
    let bundle: Bundle;
    try {
      if (ctx.remote) {
        // A PostgreSQL store (decision 0035): the same bundle, read over the asynchronous port.
        const port = await ctx.port();
        s = await findRemoteSession(port, args.positionals[0] as string);
        bundle = await exportBundleFrom(port, s.id, options);
      } else {
        const store = ctx.store({ readonly: true });
        s = findSession(store, args.positionals[0] as string);
        bundle = exportBundle(store, s.id, options);
      }
    } catch (e) {
      if (e instanceof BundleError) throw new CliError(`cannot export ${args.positionals[0]}: ${e.message}`);
      throw e;
    }
    ctx.out.progressDone();
    // exact bytes (CLI-26): not rewritten for the terminal, but its C1 and bidi characters escaped
    ctx.out.raw(`${jsonText(bundle)}\n`);
    ctx.out.note(
      `exported ${s.id}: ${bundle.branches.length} branches, ${bundle.events.length} events, ${Object.keys(bundle.blobs).length} blobs`,
    );
    return 0;
  },
};

/** The formats `--from` takes (the import package's list; kept here so a usage error loads nothing). */
const FOREIGN_FORMATS = ["claude-code", "codex", "pi", "opencode"] as const;

export const importCmd: CommandImpl = {
  check(args) {
    const from = str(args, "from");
    if (from === undefined) {
      if (args.positionals.length !== 1)
        throw new UsageError(
          `strata import takes one bundle FILE, got ${args.positionals.length}; to import other tools' sessions give --from ${FOREIGN_FORMATS.join("|")} PATH…`,
        );
      return;
    }
    if (!(FOREIGN_FORMATS as readonly string[]).includes(from))
      throw new UsageError(`--from ${JSON.stringify(from)} is not a format strata imports; use one of ${FOREIGN_FORMATS.join(", ")}`);
    if (args.positionals.length === 0)
      throw new UsageError(
        `strata import --from ${from} needs at least one PATH: ${from === "opencode" ? "~/.local/share/opencode, its storage/ directory, an opencode.db or an `opencode export` file" : "a session file or a directory of them"}`,
      );
  },
  async run(ctx, args) {
    if (str(args, "from") !== undefined) return importForeignCmd(ctx, args);
    const path = resolve(ctx.cwd, args.positionals[0] as string);
    const text = readBundleFile(path);
    const progress = (m: string) => ctx.out.progress(m);
    let bundle: Bundle;
    try {
      bundle = parseBundle(text, { progress });
    } catch (e) {
      ctx.out.progressDone();
      if (e instanceof BundleError) throw new CliError(`${path} is not a valid strata bundle: ${e.message}; nothing was imported`);
      throw e;
    }
    let r: ReturnType<typeof importBundle>;
    try {
      r = ctx.remote
        ? await importBundleInto(await ctx.port(), bundle, { progress })
        : importBundle(ctx.store({ create: true }), bundle, { progress });
    } catch (e) {
      if (e instanceof BundleError) throw new CliError(`${path}: ${e.message}`);
      throw e;
    } finally {
      ctx.out.progressDone();
    }
    if (ctx.out.json) ctx.out.data({ ...r, verified: true });
    else {
      ctx.out.line(
        `${ctx.out.paint("green", "imported")} ${ctx.out.paint("cyan", r.session)} (from ${r.importedFrom}): ${r.branchCount} branches, ${r.eventCount} events, ${r.blobCount} blobs — every head verified${r.digests ? ", digests match" : ""}`,
      );
      if (r.dropped.length > 0)
        ctx.out.note(
          `dropped ${r.dropped.length} blob${r.dropped.length === 1 ? "" : "s"} of the bundle that nothing refers to: ${r.dropped
            .slice(0, 4)
            .map((h) => `${h.slice(0, 16)}…`)
            .join(", ")}${r.dropped.length > 4 ? ", …" : ""}`,
        );
    }
    return 0;
  },
};

/** A session of a PostgreSQL store by `@last` (the newest), whole id or unique id prefix. */
async function findRemoteSession(port: AsyncStore, ref: string): Promise<SessionInfo> {
  if (ref.toLowerCase() === "@last") {
    const [newest] = await port.listSessions({ limit: 1 });
    if (newest === undefined) throw new CliError(`there are no sessions in ${port.path} yet, so @last names none`);
    return newest;
  }
  const key = ref.toUpperCase();
  if (!/^[0-9A-Z]+$/.test(key)) throw new UsageError(`"${ref}" is not a session: give its id or id prefix, or @last`);
  const exact = await port.getSession(key as never);
  if (exact !== undefined) return exact;
  const found = await port.findSessions(key);
  if (found.length === 1) return found[0] as SessionInfo;
  if (found.length === 0) throw new CliError(`no session of ${port.path} has an id starting with "${ref}"`);
  throw new CliError(
    `"${ref}" matches ${found.length} sessions of ${port.path}; give more of the id:\n${found
      .slice(0, 10)
      .map((s) => `  ${s.id}  ${s.title ?? ""}`)
      .join("\n")}`,
  );
}

/** The file's text; a file that is missing or unreadable is a usage error, one too large a failure. */
function readBundleFile(path: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (size > MAX_BUNDLE_FILE_BYTES)
    throw new CliError(
      `${path} is ${size} bytes; strata imports bundles of at most ${MAX_BUNDLE_FILE_BYTES} bytes (export fewer branches with --branch)`,
    );
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** `import --from`: each PATH's sessions, one transaction each; a report of what was created, skipped and refused. */
async function importForeignCmd(ctx: Context, args: Args): Promise<number> {
  const from = str(args, "from") as (typeof FOREIGN_FORMATS)[number];
  const { ImportError, importForeign, importForeignInto } = await import("@strata/import");
  const paths = args.positionals.map((p) => resolve(ctx.cwd, p));
  // Every PATH is read before the database is opened: one that cannot be read is a usage error (exit 2).
  for (const path of paths)
    try {
      statSync(path);
    } catch (e) {
      throw new UsageError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  // SQLite (created if need be), or PostgreSQL: there each session is written as on SQLite, then moved as a bundle.
  const store = await ctx.writer({ create: true });
  const sessions: { session: string; file: string; sourceId: string; version: string; branchCount: number; eventCount: number }[] = [];
  const skipped: { file: string; session: string }[] = [];
  const ignored: { file: string; message: string }[] = [];
  const failed: { file: string; message: string }[] = [];
  const problems: { file: string; line: number; message: string }[] = [];
  for (const path of paths) {
    try {
      const options = {
        from,
        path,
        progress: (done: number, total: number, file: string) => {
          if (total > 1 && file !== "") ctx.out.progress(`importing ${done + 1}/${total} ${file}`);
        },
      };
      const r = isAsyncStore(store) ? await importForeignInto(store, options) : importForeign(store, options);
      sessions.push(...r.sessions);
      skipped.push(...r.skipped);
      ignored.push(...r.ignored);
      failed.push(...r.failed.map((f) => ({ file: f.file, message: f.message })));
      problems.push(...r.problems);
    } catch (e) {
      if (!(e instanceof ImportError)) throw e;
      failed.push({ file: e.file ?? path, message: e.message });
    } finally {
      ctx.out.progressDone();
    }
  }
  const handles = handlesOf((await store.listSessions()).map((s) => s.id));
  const handle = (id: string): string => handles.get(id) ?? id;
  if (ctx.out.json)
    ctx.out.data({
      format: from,
      sessions: sessions.map((s) => ({ ...s, handle: handle(s.session) })),
      skipped: skipped.map((s) => ({ ...s, handle: handle(s.session) })),
      ignored,
      failed,
      problems,
      sessionCount: sessions.length,
    });
  else {
    for (const s of sessions)
      ctx.out.line(
        `${ctx.out.paint("green", "imported")} ${ctx.out.paint("cyan", handle(s.session))} ${s.file} (${from} ${s.version}): ${s.branchCount} branch${s.branchCount === 1 ? "" : "es"}, ${s.eventCount} events`,
      );
    for (const s of skipped) ctx.out.line(`${ctx.out.paint("yellow", "skipped")} ${s.file}: already imported as ${handle(s.session)}`);
    // A file of the directory that is no session (the tool's history.jsonl, a file of summaries only).
    for (const f of ignored) ctx.out.note(`not a session, ignored: ${f.message}`);
    // (line 0: the problem concerns the whole file, or a record of a database)
    for (const p of problems) ctx.out.note(`${p.file}${p.line > 0 ? `:${p.line}` : ""}: ${p.message}`);
    for (const f of failed) ctx.out.error(`strata: ${f.message}`);
    if (sessions.length === 0 && skipped.length === 0 && failed.length === 0) ctx.out.note("no sessions found");
  }
  return failed.length > 0 ? 1 : 0;
}
