#!/usr/bin/env node
// The `strata` command. The sources are TypeScript run through tsx (no build step).
import { register } from "tsx/esm/api";

// `strata log … | head` closes the pipe early: that is not an error.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (e) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
