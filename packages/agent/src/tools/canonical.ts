/**
 * The canonical JSON of a value (keys sorted, no spaces) that the tool roster's content hashes are
 * taken over. A module of its own, so that what reads recorded inputs (`inputs.ts`, and the CLI's
 * commands through it) does not load the registry, and with it ajv, to get it.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}
