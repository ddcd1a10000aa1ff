// Loaded with --import (PK-3): appends every module URL the process resolves to $STRATA_LOADS,
// and at exit "node:crypto (loaded)" when the process loaded node:crypto by any route (an import,
// a require, a lazy load), which the resolve hook alone would not see.
import { appendFileSync } from "node:fs";
import { register } from "node:module";

register("./loads-hooks.mjs", import.meta.url);
process.on("exit", () => {
  if (process.moduleLoadList.includes("NativeModule crypto")) appendFileSync(process.env.STRATA_LOADS, "node:crypto (loaded)\n");
});
