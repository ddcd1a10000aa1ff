/**
 * Model prices for `strata cost` (CLI-45): a JSON file of US dollars per million tokens, per model
 *
 *   {"models": {"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6, "cacheRead": 0.075},
 *               "claude-sonnet-4-5": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}}
 *
 * from `--prices FILE`, else `$STRATA_PRICES`, else `prices.json` beside the database when it
 * exists. A model is priced by its exact id, else by the name after its `provider:`. A model the
 * file does not price is unpriced — nothing is guessed — and so is one whose tokens include a kind
 * its entry has no price for (cache reads, cache writes); reasoning tokens are output tokens unless
 * the entry prices them apart.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError, UsageError } from "./errors.ts";
import type { Figures } from "./usage.ts";

/** USD per million tokens of each kind. */
export interface Price {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly reasoning?: number;
}

export interface Prices {
  /** The file, absolute. */
  readonly path: string;
  readonly models: ReadonlyMap<string, Price>;
}

const FIELDS = ["input", "output", "cacheRead", "cacheWrite", "reasoning"] as const;
const REQUIRED: readonly string[] = ["input", "output"];

/** The file `strata cost` reads prices from, and whether it was named (a named file must exist). */
export function pricesFile(given: string | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string, home: string) {
  if (given !== undefined) return { path: resolve(cwd, given), named: "--prices" };
  const fromEnv = env.STRATA_PRICES;
  if (fromEnv !== undefined && fromEnv !== "") return { path: resolve(cwd, fromEnv), named: "STRATA_PRICES" };
  return { path: join(home, "prices.json"), named: undefined };
}

/**
 * Reads and checks a prices file. A named file that does not exist or cannot be read is a usage
 * error (exit 2); the default file may be absent (undefined: tokens only). A file that is not a
 * valid prices file fails (exit 1), naming the file and the field.
 */
export function loadPrices(file: { path: string; named: string | undefined }): Prices | undefined {
  let text: string;
  try {
    text = readFileSync(file.path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (file.named === undefined && code === "ENOENT") return undefined;
    throw new UsageError(
      `${file.named ?? "the prices file"} ${file.path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory, not a file" : `cannot be read (${code ?? String(e)})`}`,
    );
  }
  return { path: file.path, models: parsePrices(text, file.path) };
}

/** Checks a prices file's text; throws `CliError` naming `path` and the field that is wrong. */
export function parsePrices(text: string, path: string): Map<string, Price> {
  const bad = (where: string, what: string): CliError =>
    new CliError(
      `${path}: ${where} ${what}; a prices file is {"models": {"MODEL": {"input": USD, "output": USD, "cacheRead"?: USD, "cacheWrite"?: USD, "reasoning"?: USD}}}, US dollars per million tokens`,
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw bad("is not JSON:", (e as Error).message);
  }
  if (!isRecord(doc)) throw bad("the document", "must be an object");
  for (const k of Object.keys(doc)) if (k !== "models") throw bad(`field ${JSON.stringify(k)}`, `is not known (the one field is "models")`);
  const models = doc.models;
  if (!isRecord(models)) throw bad(`"models"`, models === undefined ? "is missing" : "must be an object of model ids");
  const out = new Map<string, Price>();
  for (const [model, entry] of Object.entries(models)) {
    const at = `models[${JSON.stringify(model)}]`;
    if (model === "") throw bad(at, "has an empty model id");
    if (!isRecord(entry)) throw bad(at, "must be an object of prices");
    const price: Record<string, number> = {};
    for (const [field, v] of Object.entries(entry)) {
      if (!(FIELDS as readonly string[]).includes(field)) throw bad(`${at}.${field}`, `is not a known field (${FIELDS.join(", ")})`);
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
        throw bad(`${at}.${field}`, `must be a number of USD per million tokens, at least 0, got ${JSON.stringify(v) ?? String(v)}`);
      price[field] = v;
    }
    for (const field of REQUIRED) if (price[field] === undefined) throw bad(`${at}.${field}`, "is missing");
    out.set(model, price as unknown as Price);
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The price of `model`: its own entry, else the entry of its name without the `provider:`. */
export function priceOf(prices: Prices | undefined, model: string): Price | undefined {
  if (prices === undefined || model === "") return undefined;
  const own = prices.models.get(model);
  if (own !== undefined) return own;
  const colon = model.indexOf(":");
  return colon < 0 ? undefined : prices.models.get(model.slice(colon + 1));
}

/**
 * What `f` costs at `price`, in USD, or why it cannot be said: no price, or a kind of token the
 * entry does not price. Nothing used costs nothing, priced or not.
 */
export function costOf(f: Figures, price: Price | undefined): { cost: number | null; missing: string[] } {
  if (f.input + f.output + f.cacheRead + f.cacheWrite + f.reasoning === 0) return { cost: 0, missing: [] };
  if (price === undefined) return { cost: null, missing: [] };
  const missing: string[] = [];
  if (f.cacheRead > 0 && price.cacheRead === undefined) missing.push("cacheRead");
  if (f.cacheWrite > 0 && price.cacheWrite === undefined) missing.push("cacheWrite");
  if (missing.length > 0) return { cost: null, missing };
  const perMillion =
    f.input * price.input +
    f.output * price.output +
    f.cacheRead * (price.cacheRead ?? 0) +
    f.cacheWrite * (price.cacheWrite ?? 0) +
    f.reasoning * (price.reasoning ?? price.output);
  return { cost: usd(perMillion / 1_000_000), missing };
}

/** Dollars rounded to a billionth, so sums print without binary noise. */
export function usd(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}
