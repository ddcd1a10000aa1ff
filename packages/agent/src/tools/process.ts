/**
 * The `run` tool's process (TL-14, TL-17, TL-18; decision 0016). A command runs under a small
 * shell supervisor that leads its own process group and holds a lifeline — a pipe whose other end
 * only this process holds. When this process dies in any way (kill -9 included), the kernel
 * closes the lifeline, the supervisor's watcher reads end-of-file and kills the whole group with
 * SIGKILL. So a call the log shows as `running` when the driver died is stopped, not finishing
 * its side effect behind the `interrupted` that resume records.
 *
 *     driver ──lifeline (fd 3)──▶ sh supervisor (group leader)
 *                                   ├─ watcher: read <&3 → EOF → kill -KILL 0 (the group)
 *                                   └─ sh -c COMMAND  (and everything it starts in the group)
 *
 * When the command ends normally the driver writes a newline on the lifeline, which releases
 * the watcher: background processes the command left running with their own output (a dev
 * server started with `… > log &`) outlive the call, as they always did. On timeout or abort
 * the driver kills the group. Processes that leave the group on purpose (`setsid`, job control)
 * are not followed: `run` is bounded, not sandboxed.
 */
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * The supervisor, run as `sh -c SUPERVISOR strata-run COMMAND`. The watcher starts first, so a
 * driver that dies at any moment after the spawn is seen (its end-of-file is waiting for the
 * watcher's `read`). Background lists of a non-interactive shell read /dev/null, hence the
 * explicit `<&3`; the watcher's output goes nowhere so it never holds the capture pipes, and the
 * command does not inherit the lifeline. `--` lets a command start with `-`. The supervisor exits
 * with the command's status (`128 + n` when signal n killed it).
 */
export const SUPERVISOR = [
  "{ if read -r _ <&3; then exit 0; fi; kill -KILL 0; } </dev/null >/dev/null 2>&1 &",
  '/bin/sh -c -- "$1" 3<&- &',
  // The shell's own "Killed" notice for a command that died of a signal is not the command's.
  "wait $! 2>/dev/null",
].join("\n");

export interface RunOptions {
  readonly timeoutMs: number;
  /** Bytes of output kept: the first and last halves (the rest is counted, not kept). */
  readonly maxCapture: number;
  readonly signal: AbortSignal;
  readonly output?: ((chunk: string) => void) | undefined;
  /** How long output may still drain once the shell exited before its group is killed (200 ms). */
  readonly drainMs?: number;
}

/** Names of signals by number, for exit codes above 128 (`128 + n` is how a shell reports one). */
const SIGNAL_NAMES = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));

function statusLine(code: number | null, signal: NodeJS.Signals | null, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `killed after ${timeoutMs} ms (time limit)`;
  if (code === null) return `killed by ${signal ?? "a signal"}`;
  const name = code > 128 ? SIGNAL_NAMES.get(code - 128) : undefined;
  return name === undefined ? `exit code ${code}` : `exit code ${code} (killed by ${name})`;
}

/** Head and tail of a stream of text, bounded in UTF-8 bytes; the middle is counted. */
class Capture {
  #head = "";
  #tail = "";
  #headBytes = 0;
  #total = 0;
  constructor(private readonly half: number) {}
  /** `bytes`: the raw bytes this text came from (what the command wrote). */
  add(text: string, bytes: number): void {
    this.#total += bytes;
    if (this.#headBytes < this.half) {
      const head = prefixWithin(text, this.half - this.#headBytes);
      this.#head += head;
      this.#headBytes += Buffer.byteLength(head);
      if (head.length === text.length) return;
      text = text.slice(head.length);
      // The head is full: from now on only the tail is kept.
      this.#headBytes = this.half;
    }
    this.#tail = suffixWithin(this.#tail + text, this.half);
  }
  text(): string {
    const kept = Buffer.byteLength(this.#head) + Buffer.byteLength(this.#tail);
    const dropped = this.#total - kept;
    return dropped > 0 ? `${this.#head}\n[… ${dropped} bytes of output not kept …]\n${this.#tail}` : this.#head + this.#tail;
  }
}

/** UTF-8 width of a UTF-16 unit that is not half of a pair (a lone surrogate is written as U+FFFD). */
function width(c: number): number {
  return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}
const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** The longest prefix of `s` of at most `max` UTF-8 bytes, cut at a character boundary. */
function prefixWithin(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1));
    const w = pair ? 4 : width(c);
    if (bytes + w > max) break;
    bytes += w;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}

/** The longest suffix of `s` of at most `max` UTF-8 bytes, cut at a character boundary. */
function suffixWithin(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  let bytes = 0;
  let i = s.length;
  while (i > 0) {
    const c = s.charCodeAt(i - 1);
    const pair = isLow(c) && i > 1 && isHigh(s.charCodeAt(i - 2));
    const w = pair ? 4 : width(c);
    if (bytes + w > max) break;
    bytes += w;
    i -= pair ? 2 : 1;
  }
  return s.slice(i);
}

/**
 * Runs `command` with `sh -c` in `cwd` under the supervisor. Output streams to `output` and is
 * kept bounded (first and last halves of `maxCapture` bytes), so a command that writes gigabytes
 * costs bounded memory. Resolves when the shell has exited and its output is drained (background
 * processes still holding the output pipes after `drainMs` are killed with the group); the group
 * is killed on abort (rejecting with the signal's reason) or timeout.
 */
export function runCommand(command: string, cwd: string, options: RunOptions): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    options.signal.throwIfAborted();
    const child = spawn("/bin/sh", ["-c", SUPERVISOR, "strata-run", command], {
      cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    const stdout = child.stdout as Readable;
    const stderr = child.stderr as Readable;
    // Absent when the spawn itself failed (reported by the "error" event).
    const lifeline = child.stdio[3] as Socket | null;
    // Nothing comes back on the lifeline, and writing to one whose watcher is gone is no error.
    lifeline?.on("error", () => {});
    const capture = new Capture(Math.floor(options.maxCapture / 2));
    let timedOut = false;
    let finished = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let open = 2;
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = (): void => kill();
    options.signal.addEventListener("abort", onAbort, { once: true });
    const settle = (): void => {
      finished = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
    };
    for (const stream of [stdout, stderr]) {
      // One decoder per stream: a character split across two reads is decoded whole.
      const decoder = new StringDecoder("utf8");
      stream.on("data", (buf: Buffer) => {
        const s = decoder.write(buf);
        capture.add(s, buf.length);
        if (s !== "") options.output?.(s);
      });
      stream.on("close", () => {
        const rest = decoder.end();
        if (rest !== "") {
          capture.add(rest, 0);
          options.output?.(rest);
        }
        open--;
        done();
      });
    }
    child.on("error", (e) => {
      if (finished) return;
      settle();
      lifeline?.destroy();
      reject(e);
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Output still in the pipes drains for a moment; anything the command left running in the
      // background that still holds them is then killed with its group.
      setTimeout(() => {
        if (finished || open === 0) return;
        kill();
        stdout.destroy();
        stderr.destroy();
      }, options.drainMs ?? 200).unref();
      done();
    });
    function done(): void {
      if (finished || exit === undefined || open > 0) return;
      settle();
      // Release the watcher (the command is over), then close our end of the lifeline.
      lifeline?.end("\n");
      if (options.signal.aborted) {
        reject(options.signal.reason ?? new DOMException("aborted", "AbortError"));
        return;
      }
      resolvePromise(`${statusLine(exit.code, exit.signal, timedOut, options.timeoutMs)}\n${capture.text()}`);
    }
  });
}
