#!/usr/bin/env node
// The `strata` command. The sources are TypeScript run through tsx (no build step).
import { register } from "tsx/esm/api";

// `strata run … | head` closes the pipe early: that is the reader's choice, not an error, and it
// must not end a command that is doing work (CLI-27). The stream is then no longer writable and
// the CLI's output layer drops what is written to it; the command finishes and exits as it would.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (e) => {
    if (e.code === "EPIPE") return;
    throw e;
  });
register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
