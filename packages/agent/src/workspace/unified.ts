/**
 * A unified diff of two texts (IN-24): the format `diff -u` and `git diff` write — `--- a/PATH`,
 * `+++ b/PATH`, hunks `@@ -l,s +l,s @@` with context lines, `\ No newline at end of file` where a
 * side's last line has no newline — so `patch` and `git apply` accept it.
 *
 * Lines are compared by Myers' algorithm (an edit script of minimal length: as many `+`/`-` lines
 * as `diff --minimal`), after the common head and tail are set aside. The work is bounded:
 * O((N + M) · D) time and O(D²) memory for D edits, and past `maxEdits` (or `maxWork` comparisons)
 * the differing middle is shown as a replacement (all of it removed, then all of it added; `coarse` says so). The result
 * is still a correct patch; it is only longer than it needs to be.
 */

export interface UnifiedOptions {
  /** Lines of context around each change (default 3, as `diff -u`). */
  readonly context?: number;
  /** Edits searched for a minimal script at most; past them the middle is a replacement (default 1000). */
  readonly maxEdits?: number;
  /**
   * Line comparisons the search may make, about (lines of the differing middle) × (edits searched):
   * a long middle is searched for fewer edits (default 50 million, a fraction of a second).
   */
  readonly maxWork?: number;
}

export interface Unified {
  /** The diff, headers first; "" when the texts are equal. Every line ends in "\n". */
  readonly text: string;
  /** Lines added and removed. */
  readonly added: number;
  readonly removed: number;
  /** True when the edits exceeded `maxEdits` and the middle is shown as a replacement. */
  readonly coarse: boolean;
}

export const DEFAULT_MAX_EDITS = 1000;
export const DEFAULT_MAX_WORK = 50_000_000;

const EQUAL = 0;
const DELETE = 1;
const INSERT = 2;

/** One line of the edit script: what it is, and its index in `a` (equal, delete) and `b` (equal, insert). */
interface Step {
  readonly op: typeof EQUAL | typeof DELETE | typeof INSERT;
  readonly a: number;
  readonly b: number;
}

interface Lines {
  readonly lines: readonly string[];
  /** False when the text does not end in "\n" (its last line has none). */
  readonly eol: boolean;
}

function splitLines(s: string): Lines {
  if (s === "") return { lines: [], eol: true };
  const lines = s.split("\n");
  const eol = lines[lines.length - 1] === "";
  if (eol) lines.pop();
  return { lines, eol };
}

/**
 * Each line as a number, equal lines equal numbers. A last line without a newline is a different
 * line from the same text with one (as in `diff`): its key has a "\n", which no line has.
 */
function keys(x: Lines, intern: Map<string, number>): Int32Array {
  const out = new Int32Array(x.lines.length);
  for (let i = 0; i < x.lines.length; i++) {
    const line = x.lines[i] as string;
    const key = !x.eol && i === x.lines.length - 1 ? `\n${line}` : line;
    let n = intern.get(key);
    if (n === undefined) {
      n = intern.size;
      intern.set(key, n);
    }
    out[i] = n;
  }
  return out;
}

/**
 * Myers' edit script turning `a[lo..ahi)` into `b[lo..bhi)` (the greedy forward search with the
 * frontier kept per step, then a walk back), or undefined when it needs more than `cap` edits.
 */
function myers(a: Int32Array, b: Int32Array, lo: number, ahi: number, bhi: number, cap: number): Step[] | undefined {
  const n = ahi - lo;
  const m = bhi - lo;
  const max = Math.min(n + m, cap);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d]: v over diagonals -(d+1) … d+1 before step d, read back at index k + d + 1
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[off + k - 1] as number) < (v[off + k + 1] as number))
          ? (v[off + k + 1] as number)
          : (v[off + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[lo + x] === b[lo + y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, d, n, m, lo);
    }
  }
  return undefined;
}

function backtrack(trace: readonly Int32Array[], last: number, n: number, m: number, lo: number): Step[] {
  const out: Step[] = [];
  let x = n;
  let y = m;
  for (let d = last; d >= 0; d--) {
    const v = trace[d] as Int32Array;
    const at = (k: number) => v[k + d + 1] as number;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      out.push({ op: EQUAL, a: lo + x, b: lo + y });
    }
    if (d === 0) break;
    if (x === prevX) out.push({ op: INSERT, a: lo + x, b: lo + prevY });
    else out.push({ op: DELETE, a: lo + prevX, b: lo + y });
    x = prevX;
    y = prevY;
  }
  return out.reverse();
}

/** The edit script for all of `a` → `b`, and whether its middle is a replacement. */
function script(a: Int32Array, b: Int32Array, maxEdits: number, maxWork: number): { steps: Step[]; coarse: boolean } {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const ahi = a.length - tail;
  const bhi = b.length - tail;
  const steps: Step[] = [];
  for (let i = 0; i < head; i++) steps.push({ op: EQUAL, a: i, b: i });
  // the middle starts at the same index on both sides (the head is common)
  // a middle with one side empty is all inserts or all deletes: that script is the minimal one
  const oneSided = ahi === head || bhi === head;
  const cap = Math.min(maxEdits, Math.floor(maxWork / Math.max(1, ahi + bhi - 2 * head)));
  const middle = oneSided ? undefined : myers(a, b, head, ahi, bhi, cap);
  const coarse = middle === undefined && !oneSided;
  if (middle !== undefined) for (const s of middle) steps.push(s);
  else {
    for (let i = head; i < ahi; i++) steps.push({ op: DELETE, a: i, b: head });
    for (let j = head; j < bhi; j++) steps.push({ op: INSERT, a: ahi, b: j });
  }
  for (let t = 0; t < tail; t++) steps.push({ op: EQUAL, a: ahi + t, b: bhi + t });
  return { steps, coarse };
}

/** A hunk header's range: `start,count`, `start` alone for one line; an empty range names the line before it. */
function range(first: number, count: number): string {
  if (count === 0) return `${first},0`;
  return count === 1 ? `${first + 1}` : `${first + 1},${count}`;
}

/**
 * The unified diff turning `a` into `b`. `labelA`/`labelB` are the header names (`a/PATH`,
 * `b/PATH`, or `/dev/null` for a side that does not exist).
 */
export function unifiedDiff(a: string, b: string, labelA: string, labelB: string, options: UnifiedOptions = {}): Unified {
  if (a === b) return { text: "", added: 0, removed: 0, coarse: false };
  const context = Math.max(0, options.context ?? 3);
  const la = splitLines(a);
  const lb = splitLines(b);
  const intern = new Map<string, number>();
  const { steps, coarse } = script(
    keys(la, intern),
    keys(lb, intern),
    Math.max(0, options.maxEdits ?? DEFAULT_MAX_EDITS),
    Math.max(0, options.maxWork ?? DEFAULT_MAX_WORK),
  );
  const out: string[] = [`--- ${labelA}\n`, `+++ ${labelB}\n`];
  let added = 0;
  let removed = 0;
  const changed: number[] = [];
  for (let i = 0; i < steps.length; i++) if ((steps[i] as Step).op !== EQUAL) changed.push(i);
  const noEol = (s: Step): boolean =>
    (s.op !== INSERT && !la.eol && s.a === la.lines.length - 1) || (s.op === INSERT && !lb.eol && s.b === lb.lines.length - 1);
  for (let c = 0; c < changed.length; ) {
    // a hunk: changes whose gaps of equal lines are at most two contexts long
    let last = c;
    while (last + 1 < changed.length && (changed[last + 1] as number) - (changed[last] as number) - 1 <= 2 * context) last++;
    const from = Math.max(0, (changed[c] as number) - context);
    const to = Math.min(steps.length - 1, (changed[last] as number) + context);
    const body: string[] = [];
    let aCount = 0;
    let bCount = 0;
    for (let i = from; i <= to; i++) {
      const s = steps[i] as Step;
      if (s.op === EQUAL) {
        body.push(` ${la.lines[s.a]}\n`);
        aCount++;
        bCount++;
      } else if (s.op === DELETE) {
        body.push(`-${la.lines[s.a]}\n`);
        aCount++;
        removed++;
      } else {
        body.push(`+${lb.lines[s.b]}\n`);
        bCount++;
        added++;
      }
      if (noEol(s)) body.push("\\ No newline at end of file\n");
    }
    const first = steps[from] as Step;
    out.push(`@@ -${range(first.a, aCount)} +${range(first.b, bCount)} @@\n`);
    // not push(...body): a hunk can have more lines than a call has arguments
    for (const line of body) out.push(line);
    c = last + 1;
  }
  return { text: out.join(""), added, removed, coarse };
}

/**
 * A path as a diff header names it, as git writes it: C-quoted when it holds a control character,
 * a quote or a backslash, which would break the header's line (`"a/x\ty"`); followed by a tab when
 * it holds a space, so `patch` does not read the rest of the name as a timestamp.
 */
export function headerPath(prefix: string, path: string): string {
  const p = `${prefix}${path}`;
  if (!/[\u0000-\u001f\u007f"\\]/.test(p)) return p.includes(" ") ? `${p}\t` : p;
  const named: Record<string, string> = { "\t": "\\t", "\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\" };
  return `"${p.replace(/[\u0000-\u001f\u007f"\\]/g, (c) => named[c] ?? `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`)}"`;
}
