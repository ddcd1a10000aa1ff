/** How session content is shown (IN-16): as text, with control characters made visible. */

/** Text for display: control characters (ANSI escapes, NUL …) shown as symbols, never interpreted. */
export function visible(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, (c) =>
    c === "\u001b" ? "␛" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

/** A timestamp (ms since the epoch) as `YYYY-MM-DD HH:MM:SS` UTC. */
export function time(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}
