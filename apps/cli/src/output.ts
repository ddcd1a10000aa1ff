/**
 * Terminal output (CLI-3, CLI-26, CLI-27). Human output goes to stdout, notes, progress and errors
 * to stderr; colour only on a TTY without NO_COLOR or --no-color; `--json` prints one JSON
 * document on stdout and nothing else. Every string of human output passes through
 * `terminalSafe` here, so no command can print session data raw: the only escape sequences that
 * reach the terminal are this module's own (colours marked with a per-process nonce that data
 * cannot forge, and the progress line's rewrite). A stream that was closed (EPIPE: `strata … |
 * head`) drops what is written to it; the command goes on with its work.
 */
import { jsonText, terminalSafe } from "./terminal.ts";

export interface Out {
  readonly json: boolean;
  readonly color: boolean;
  readonly quiet: boolean;
  /** Progress is shown (stderr is a terminal; neither --quiet nor --json). */
  readonly live: boolean;
  /** A line of the command's result on stdout (suppressed under --json). */
  line(s?: string): void;
  /** Context on stdout (a banner, a table header, a hint): dropped by --quiet and --json. */
  info(s?: string): void;
  /** Human output without a line end (streamed text; suppressed under --json). */
  write(s: string): void;
  /** The JSON document of a command (only under --json). */
  data(value: unknown): void;
  /** Exact text on stdout, never rewritten (a bundle): for data, not for messages. */
  raw(s: string): void;
  /** A note on stderr (suppressed by --quiet and --json). */
  note(s: string): void;
  /** An error message on stderr (always). */
  error(s: string): void;
  /** Progress on a TTY's stderr, one line rewritten in place; nothing otherwise. */
  progress(s: string): void;
  progressDone(): void;
  paint(style: Style, s: string): string;
}

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "blue" | "magenta" | "cyan";
const CODES: Record<Style, string> = { bold: "1", dim: "2", red: "31", green: "32", yellow: "33", blue: "34", magenta: "35", cyan: "36" };

export interface Stream {
  write(s: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
  /** false once the stream was closed or failed (Node's writables). */
  readonly writable?: boolean;
}

export interface OutStreams {
  readonly stdout: Stream;
  readonly stderr: Stream;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Colour markers: U+E000, the nonce, the SGR code, U+E001 (private-use characters). */
const MARK = /\ue000[0-9a-f]{12}([0-9;]+)\ue001/g;

/** Writes unless the stream was closed under us; an EPIPE is the reader's choice, not a failure. */
function send(stream: Stream, s: string): void {
  if (stream.writable === false) return;
  try {
    stream.write(s);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPIPE" && (e as NodeJS.ErrnoException).code !== "ERR_STREAM_DESTROYED") throw e;
  }
}

export function makeOut(streams: OutStreams, options: { json: boolean; noColor: boolean; quiet: boolean }): Out {
  const color =
    !options.json &&
    !options.noColor &&
    streams.stdout.isTTY === true &&
    (streams.env.NO_COLOR ?? "") === "" &&
    streams.env.TERM !== "dumb";
  // Unguessable by whoever wrote the session data before this process started, so data cannot
  // forge a colour mark (V8 seeds Math.random per process from the OS); not node:crypto, whose
  // load would cost every start a few milliseconds (issue 16).
  const nonce = Array.from({ length: 3 }, () =>
    Math.floor(Math.random() * 0x1_0000)
      .toString(16)
      .padStart(4, "0"),
  ).join("");
  const own = new RegExp(`\\ue000${nonce}([0-9;]+)\\ue001`, "g");
  /** Session data made safe, then this process's own colour marks turned into SGR sequences. */
  const render = (s: string): string => terminalSafe(s).replace(own, (_, code: string) => `\x1b[${code}m`);
  let progressShown = false;
  const clearProgress = (): void => {
    if (progressShown) send(streams.stderr, "\r\x1b[K");
    progressShown = false;
  };
  const human = (s: string): void => {
    if (options.json) return;
    clearProgress();
    send(streams.stdout, render(s));
  };
  return {
    json: options.json,
    color,
    quiet: options.quiet,
    live: !options.json && !options.quiet && streams.stderr.isTTY === true,
    line(s = "") {
      human(`${s}\n`);
    },
    info(s = "") {
      if (!options.quiet) human(`${s}\n`);
    },
    write(s) {
      human(s);
    },
    data(value) {
      if (options.json) send(streams.stdout, `${jsonText(value, 2)}\n`);
    },
    raw(s) {
      send(streams.stdout, s);
    },
    note(s) {
      if (options.json || options.quiet) return;
      clearProgress();
      send(streams.stderr, `${render(s)}\n`);
    },
    error(s) {
      clearProgress();
      send(streams.stderr, `${render(s)}\n`);
    },
    progress(s) {
      if (options.json || options.quiet || streams.stderr.isTTY !== true) return;
      if (streams.stderr.writable === false) return;
      // one line only: a wrapped line could not be rewritten in place
      // a pseudo-terminal without a window size reports 0 columns
      const width = Math.max(20, (streams.stderr.columns || 80) - 1);
      const line = render(s.replace(/\n/g, " "));
      send(streams.stderr, `\r\x1b[K${visibleCut(line, width)}`);
      progressShown = true;
    },
    progressDone: clearProgress,
    paint(style, s) {
      return color ? `\ue000${nonce}${CODES[style]}\ue001${s}\ue000${nonce}0\ue001` : s;
    },
  };
}

/** Cuts rendered text to `width` visible characters (SGR sequences do not count). */
function visibleCut(s: string, width: number): string {
  let seen = 0;
  let out = "";
  let styled = false;
  for (let i = 0; i < s.length; i++) {
    const sgr = /^\x1b\[[0-9;]*m/.exec(s.slice(i, i + 16));
    if (sgr !== null) {
      out += sgr[0];
      styled = true;
      i += sgr[0].length - 1;
      continue;
    }
    if (seen >= width) continue;
    out += s[i];
    seen++;
  }
  return seen >= width && styled ? `${out}\x1b[0m` : out;
}

/** The width of text as printed: colour marks and SGR sequences take no room. */
function visibleLength(s: string): number {
  return s.replace(MARK, "").replace(/\x1b\[[0-9;]*m/g, "").length;
}

/** A plain text table: columns padded to their widest cell (colour not counted). */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const r of rows) for (const [i, c] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, visibleLength(c));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - visibleLength(c))))
      .join("  ")
      .trimEnd(),
  );
}

/** `2026-11-29 23:05:12` in UTC; a time no Date can hold is shown as such instead of throwing. */
/** `n` and the noun, plural unless n is 1: "1 step", "3 steps". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export function time(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `(time ${ms}?)` : d.toISOString().slice(0, 19).replace("T", " ");
}

/** `3 min ago`, for listings. */
export function ago(ms: number, now: number): string {
  if (!Number.isFinite(ms)) return "?";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}
