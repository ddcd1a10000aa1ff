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
  readonly value: Record<string, unknown>;
}

/** The records of a JSONL text, and the lines that are not records. */
export function readJsonLines(text: string, file: string): { records: JsonLine[]; problems: ImportProblem[] } {
  const records: JsonLine[] = [];
  const problems: ImportProblem[] = [];
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
      problems.push({ file, line, message: `not JSON (${(e as Error).message}); the line is kept in the source blob only` });
      continue;
    }
    if (!isObject(value)) {
      problems.push({
        file,
        line,
        message: `a JSON ${Array.isArray(value) ? "array" : typeof value}, not a record; kept in the source blob only`,
      });
      continue;
    }
    records.push({ line, value });
  }
  return { records, problems };
}
