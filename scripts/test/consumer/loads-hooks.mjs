// The resolve hook of loads.mjs (it runs on the loader thread, which sees the same environment).
import { appendFileSync } from "node:fs";

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.STRATA_LOADS, `${r.url}\n`);
  return r;
}
