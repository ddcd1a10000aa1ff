/**
 * Terminal output (CLI-3): colour only on a TTY without NO_COLOR or --no-color; `--json` prints
 * one JSON document on stdout and nothing else; progress and notes go to stderr.
 */
export interface Out {
  readonly json: boolean;
  readonly color: boolean;
  readonly quiet: boolean;
  /** A line of human output on stdout (suppressed under --json). */
  line(s?: string): void;
  /** Human output without a line end (streamed text; suppressed under --json). */
  write(s: string): void;
  /** The JSON document of a command (only under --json). */
  data(value: unknown): void;
  /** A note on stderr (suppressed by --quiet and --json). */
  note(s: string): void;
  /** Progress on a TTY's stderr, rewritten in place; nothing otherwise. */
  progress(s: string): void;
  progressDone(): void;
  paint(style: Style, s: string): string;
}

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "blue" | "magenta" | "cyan";
const CODES: Record<Style, string> = { bold: "1", dim: "2", red: "31", green: "32", yellow: "33", blue: "34", magenta: "35", cyan: "36" };

export interface OutStreams {
  readonly stdout: { write(s: string): unknown; isTTY?: boolean };
  readonly stderr: { write(s: string): unknown; isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function makeOut(streams: OutStreams, options: { json: boolean; noColor: boolean; quiet: boolean }): Out {
  const color =
    !options.json &&
    !options.noColor &&
    streams.stdout.isTTY === true &&
    (streams.env.NO_COLOR ?? "") === "" &&
    streams.env.TERM !== "dumb";
  let progressShown = false;
  return {
    json: options.json,
    color,
    quiet: options.quiet,
    line(s = "") {
      if (!options.json) streams.stdout.write(`${s}\n`);
    },
    write(s) {
      if (!options.json) streams.stdout.write(s);
    },
    data(value) {
      if (options.json) streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
    note(s) {
      if (!options.json && !options.quiet) streams.stderr.write(`${s}\n`);
    },
    progress(s) {
      if (options.json || options.quiet || streams.stderr.isTTY !== true) return;
      streams.stderr.write(`\r\x1b[K${s}`);
      progressShown = true;
    },
    progressDone() {
      if (progressShown) streams.stderr.write("\r\x1b[K");
      progressShown = false;
    },
    paint(style, s) {
      return color ? `\x1b[${CODES[style]}m${s}\x1b[0m` : s;
    },
  };
}

/** A plain text table: columns padded to their widest cell (ANSI codes not counted). */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "").length;
  const widths: number[] = [];
  for (const r of rows) for (const [i, c] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, visible(c));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - visible(c))))
      .join("  ")
      .trimEnd(),
  );
}

/** `2026-11-29 23:05:12` in UTC. */
export function time(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

/** `3 min ago`, for listings. */
export function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/**
 * Text from a model or a tool, made safe for a terminal: control characters (ANSI and OSC escape
 * sequences, bells, carriage returns) are shown as symbols instead of being interpreted; newlines
 * and tabs stay.
 */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? "␡" : `\\x${code.toString(16)}`;
  });
}
