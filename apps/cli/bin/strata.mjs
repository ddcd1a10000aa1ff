#!/usr/bin/env node
// The `strata` command. It runs the compiled command (dist/main.js, built by scripts/build.mjs).
// In a checkout of the repository it runs the TypeScript sources through tsx instead when there is
// no build, when the build is older than the sources, or when the process resolves the packages to
// their sources (node --conditions=@strata/source, as the tests run).
import { existsSync } from "node:fs";

// `strata run … | head` closes the pipe early: that is the reader's choice, not an error, and it
// must not end a command that is doing work (CLI-27). The stream is then no longer writable and
// the CLI's output layer drops what is written to it; the command finishes and exits as it would.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (e) => {
    if (e.code === "EPIPE") return;
    throw e;
  });

const here = (path) => new URL(path, import.meta.url);
/** Only a checkout has this file (it is not in the published package). */
const checkout = existsSync(here("../tsconfig.build.json"));

/** Why a checkout's build cannot be used, or undefined when it is current. */
async function staleBuild() {
  // (read from the flags: asking the resolver costs a few milliseconds on every start)
  const flags = `${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`;
  if (/(?:--conditions|-C)[= ]?@strata\/source\b/.test(flags)) return "--conditions=@strata/source";
  // the inputs of the build and their stamp, as scripts/build.mjs reads them
  const { PACKAGES, stale } = await import("../../../scripts/build-inputs.mjs");
  return stale(PACKAGES.find((p) => p.name === "@strata/cli"));
}

let entry = "../dist/main.js";
if (checkout) {
  const why = await staleBuild();
  if (why !== undefined) {
    if (!why.startsWith("--") && process.stderr.isTTY)
      process.stderr.write(`strata: running from the sources (the build is ${why}; \`npx -y pnpm@12.4.2 build\` makes start-up fast)\n`);
    const { register } = await import("node:module");
    const { register: tsx } = await import("tsx/esm/api");
    tsx();
    // the workspace's packages, as sources too (their exports' "@strata/source" condition)
    const hook =
      "export function resolve(s, c, n) { return n(s, { ...c, conditions: [...new Set([...c.conditions, '@strata/source'])] }); }";
    register(`data:text/javascript,${encodeURIComponent(hook)}`);
    entry = "../src/main.ts";
  }
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
