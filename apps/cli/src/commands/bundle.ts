/**
 * `export` and `import` (CLI-23): thin wrappers over the engine's bundles (EN-32). `export` writes
 * `exportBundle`'s document on stdout; `import` reads a file, checks every field of it with
 * `parseBundle` before it opens (or creates) the database, and imports it with `importBundle` in
 * one transaction. A file that cannot be read is a usage error (exit 2); a file that is not a valid
 * bundle, or does not verify, is a failure (exit 1, CLI-2: a damaged or foreign file) and leaves
 * the database exactly as it was.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { type Bundle, BundleError, exportBundle, importBundle, parseBundle } from "@strata/engine";
import { findSession } from "../address.ts";
import type { CommandImpl } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { jsonText } from "../terminal.ts";

/** The largest bundle file `import` reads (about the longest string JavaScript can hold). */
export const MAX_BUNDLE_FILE_BYTES = 512 * 1024 * 1024;

export const exportCmd: CommandImpl = {
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const s = findSession(store, args.positionals[0] as string);
    let bundle: Bundle;
    try {
      bundle = exportBundle(store, s.id, {
        ...(ctx.branch === undefined ? {} : { branch: ctx.branch }),
        progress: (m) => ctx.out.progress(m),
      });
    } catch (e) {
      if (e instanceof BundleError) throw new CliError(`cannot export ${s.id}: ${e.message}`);
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

export const importCmd: CommandImpl = {
  run(ctx, args) {
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
    const store = ctx.store({ create: true });
    let r: ReturnType<typeof importBundle>;
    try {
      r = importBundle(store, bundle, { progress });
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
