/**
 * A line diff for people (what `verifyRequests` shows when a re-rendered part differs from the
 * recorded one): `- ` lines are only in `before`, `+ ` lines only in `after`, `  ` lines are
 * context, `…` stands for unchanged lines left out. Common leading and trailing lines are cut
 * first; the rest is diffed by longest common subsequence when it is small enough, otherwise
 * shown as removed then added. The output is bounded (`maxLines`).
 */

export interface LineDiffOptions {
  /** Unchanged lines shown around each change (default 2). */
  readonly context?: number;
  /** Lines of output at most (default 80); the rest is counted. */
  readonly maxLines?: number;
  /** Characters of one line shown at most (default 400). */
  readonly maxLineChars?: number;
}

/** Cells of the LCS table at most (about 4 MB). */
const MAX_CELLS = 1_000_000;

type Row = readonly [" " | "-" | "+", string];

/** The diff of `before` → `after` as text, or "" when they are equal. */
export function lineDiff(before: string, after: string, options: LineDiffOptions = {}): string {
  if (before === after) return "";
  const context = options.context ?? 2;
  const maxLines = options.maxLines ?? 80;
  const maxChars = options.maxLineChars ?? 400;
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const rows: Row[] = [];
  for (let i = 0; i < start; i++) rows.push([" ", a[i] as string]);
  rows.push(...middle(a.slice(start, endA), b.slice(start, endB)));
  for (let i = endA; i < a.length; i++) rows.push([" ", a[i] as string]);
  // Keep changes and `context` lines around them.
  const keep = new Uint8Array(rows.length);
  rows.forEach(([k], i) => {
    if (k === " ") return;
    for (let j = Math.max(0, i - context); j <= Math.min(rows.length - 1, i + context); j++) keep[j] = 1;
  });
  const out: string[] = [];
  let skipped = false;
  let dropped = 0;
  for (let i = 0; i < rows.length; i++) {
    if (keep[i] === 0) {
      if (!skipped && out.length < maxLines) out.push("  …");
      skipped = true;
      continue;
    }
    skipped = false;
    const [k, line] = rows[i] as Row;
    if (out.length >= maxLines) {
      if (k !== " ") dropped++;
      continue;
    }
    out.push(`${k} ${line.length > maxChars ? `${line.slice(0, maxChars)}… (${line.length} characters)` : line}`);
  }
  if (dropped > 0) out.push(`… ${dropped} more changed lines not shown`);
  return out.join("\n");
}

/** The diff of two line lists with nothing in common at either end. */
function middle(a: readonly string[], b: readonly string[]): Row[] {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > MAX_CELLS) return [...a.map((l): Row => ["-", l]), ...b.map((l): Row => ["+", l])];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j] ? (lcs[(i + 1) * w + j + 1] as number) + 1 : Math.max(lcs[(i + 1) * w + j] as number, lcs[i * w + j + 1] as number);
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      rows.push([" ", a[i] as string]);
      i++;
      j++;
    } else if ((lcs[(i + 1) * w + j] as number) >= (lcs[i * w + j + 1] as number)) rows.push(["-", a[i++] as string]);
    else rows.push(["+", b[j++] as string]);
  }
  while (i < n) rows.push(["-", a[i++] as string]);
  while (j < m) rows.push(["+", b[j++] as string]);
  return rows;
}
