/**
 * JSONL sources (IM-5): the file split into lines, each parsed with `JSON.parse`. A line that is
 * not JSON, or not a JSON object, is a problem naming the file and the line — never skipped in
 * silence; blank lines are nothing (writers end files with a newline). The lines keep their
 * numbers, so every element the writer makes names the line it came from.
 */
import { type ImportProblem, isObject } from "./foreign.ts";

export interface JsonLine {
  /** 1-based. */
  readonly line: number;
  /** The second, third … record of a line holding several (2, 3 …); absent for a line's first. */
  readonly part?: number;
  readonly value: Record<string, unknown>;
}

/** A record's key by its place (formats whose records have no ids): `L<line>`, `L<line>.2` … */
export function lineKey(r: JsonLine): string {
  return r.part === undefined ? `L${r.line}` : `L${r.line}.${r.part}`;
}

/** The records of a JSONL text, and the lines that are not records. */
export function readJsonLines(
  text: string,
  file: string,
): { records: JsonLine[]; problems: ImportProblem[] /** Lines that are not JSON records (of the problems). */; unreadable: number } {
  const records: JsonLine[] = [];
  const problems: ImportProblem[] = [];
  let unreadable = 0;
  let start = 0;
  let line = 0;
  // A BOM is not part of the first record.
  if (text.charCodeAt(0) === 0xfeff) start = 1;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    line++;
    let raw = text.slice(start, end);
    if (raw.endsWith("\r")) raw = raw.slice(0, -1);
    start = end + 1;
    if (raw.trim() === "") {
      if (end === text.length) break;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      // Records appended with no newline between them (seen in real Pi files): each is read, and said so.
      const joined = splitRecords(raw);
      if (joined !== undefined) {
        problems.push({ file, line, message: `${joined.length} JSON records on one line, with no newline between them; each is read` });
        joined.forEach((value, i) => void records.push(i === 0 ? { line, value } : { line, part: i + 1, value }));
        continue;
      }
      unreadable++;
      problems.push({ file, line, message: `not JSON (${(e as Error).message}); the line is kept in the source blob only` });
      continue;
    }
    if (!isObject(value)) {
      unreadable++;
      problems.push({
        file,
        line,
        message: `a JSON ${Array.isArray(value) ? "array" : typeof value}, not a record; kept in the source blob only`,
      });
      continue;
    }
    records.push({ line, value });
  }
  return { records, problems, unreadable };
}

/**
 * The records of a line that is several JSON objects one after another (`{…}{…}`), cut where an
 * object closes at the top level outside a string; undefined unless there are two or more and
 * each is a JSON object.
 */
function splitRecords(raw: string): Record<string, unknown>[] | undefined {
  const pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (depth === 0) {
        if (c !== 0x7b) return undefined;
        start = i;
      }
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth < 0) return undefined;
      if (depth === 0) pieces.push(raw.slice(start, i + 1));
    } else if (depth === 0 && c !== 0x20 && c !== 0x09) return undefined;
  }
  if (depth !== 0 || pieces.length < 2) return undefined;
  const out: Record<string, unknown>[] = [];
  for (const p of pieces) {
    try {
      const v: unknown = JSON.parse(p);
      if (!isObject(v)) return undefined;
      out.push(v);
    } catch {
      return undefined;
    }
  }
  return out;
}
