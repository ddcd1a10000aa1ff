/**
 * Real SSE clients and a real network between them and `strata serve`, for the replica tests
 * (IN-18): the server run as the `strata` binary, a TCP proxy that cuts connections at random
 * byte positions (mid-frame, mid-CRLF, mid-character), and three followers that feed a `Replica`
 * — the npm `eventsource` client, `eventsource-parser` over raw HTTP, and strata's `SseDecoder`
 * over raw HTTP — each reconnecting with `Last-Event-ID` as an `EventSource` does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { decodeSseMessage, type Frame, Replica, SseDecoder } from "@strata/engine";
import { EventSource } from "eventsource";
import { createParser } from "eventsource-parser";

export const ROOT = join(import.meta.dirname, "..", "..", "..");
const BIN = join(ROOT, "apps", "cli", "bin", "strata.mjs");

export interface Served {
  readonly url: string;
  readonly proc: ChildProcess;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<void>;
}

/** `strata serve --port 0 --db PATH` as a child process; resolves with its URL once it listens. */
export async function strataServe(db: string): Promise<Served> {
  const proc = spawn(process.execPath, [BIN, "serve", "--port", "0", "--db", db], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strata serve did not start:\n${out}\n${err}`)), 60_000);
    proc.stdout?.on("data", (c) => {
      out += c;
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    proc.stderr?.on("data", (c) => {
      err += c;
    });
    proc.on("exit", (code) => reject(new Error(`strata serve exited (${code}):\n${out}\n${err}`)));
  });
  return {
    url,
    proc,
    stderr: () => err,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.kill("SIGTERM");
      }),
  };
}

/** A seeded PRNG (xorshift32). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/**
 * A TCP proxy to `target` that cuts each of its first `cuts` connections after a random number
 * of response bytes (1 … `maxBudget`), then lets connections through.
 */
export class CutProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #left: number;
  cutsDone = 0;
  /** Cuts that fell inside a frame (the bytes before the cut did not end with a blank line). */
  midFrame = 0;
  /** Requests that carried a Last-Event-ID header (reconnects resuming from a cursor). */
  resumed = 0;
  /** The status of every response that passed (one per connection: clients here do not pipeline). */
  readonly statuses: number[] = [];
  port = 0;

  constructor(
    private readonly target: number,
    cuts: number,
    private readonly maxBudget: number,
    private readonly random: () => number,
  ) {
    this.#left = cuts;
    this.#server = createServer((client) => this.#pipe(client));
  }

  async listen(): Promise<string> {
    await new Promise<void>((ok) => this.#server.listen(0, "127.0.0.1", ok));
    this.port = (this.#server.address() as { port: number }).port;
    return `http://127.0.0.1:${this.port}/`;
  }

  #pipe(client: Socket): void {
    const upstream = createConnection(this.target, "127.0.0.1");
    this.#sockets.add(client).add(upstream);
    const cut = this.#left > 0;
    if (cut) this.#left--;
    let budget = cut ? 1 + Math.floor(this.random() * this.maxBudget) : Number.POSITIVE_INFINITY;
    let tail = "";
    let head = "";
    client.on("data", (c: Buffer) => {
      head += c.toString("latin1");
      if (/\r\nlast-event-id: *\S/i.test(head)) {
        this.resumed++;
        head = "";
      }
      upstream.write(c);
    });
    const statuses = responseStatuses((status) => this.statuses.push(status));
    upstream.on("data", (c: Buffer) => {
      statuses(c);
      if (c.length < budget) {
        budget -= c.length;
        tail = (tail + c.toString("latin1")).slice(-6);
        client.write(c);
        return;
      }
      const part = c.subarray(0, budget);
      tail = (tail + part.toString("latin1")).slice(-6);
      budget = 0;
      this.cutsDone++;
      // The response is chunked: a frame boundary may be followed by the chunk's CRLF.
      if (!/\n\n(\r\n)?$/.test(tail)) this.midFrame++;
      client.end(part, () => client.destroy());
      upstream.destroy();
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  }

  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    return new Promise((ok) => this.#server.close(() => ok()));
  }
}

/**
 * Reads the status of each response on a keep-alive connection: heads, and bodies skipped by
 * `content-length`. A response without one (a stream) is the connection's last that is read.
 */
function responseStatuses(onStatus: (status: number) => void): (chunk: Buffer) => void {
  let buf = "";
  let skip = 0;
  let streaming = false;
  return (chunk) => {
    if (streaming) return;
    buf += chunk.toString("latin1");
    for (;;) {
      if (skip > 0) {
        const n = Math.min(skip, buf.length);
        buf = buf.slice(n);
        skip -= n;
        if (skip > 0) return;
      }
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.slice(0, end);
      buf = buf.slice(end + 4);
      onStatus(Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0));
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (length === null) {
        streaming = true;
        return;
      }
      skip = Number(length[1]);
    }
  };
}

/** A follower: a replica fed by one SSE client, and what it saw. */
export interface Follower {
  readonly name: string;
  readonly replica: Replica;
  readonly frames: Frame[];
  readonly errors: string[];
  connections: number;
  close(): void;
}

function follower(name: string, onFrame?: (f: Frame, r: Replica) => void): Follower & { take(f: Frame): void } {
  const replica = new Replica();
  const f = {
    name,
    replica,
    frames: [] as Frame[],
    errors: [] as string[],
    connections: 0,
    close: () => undefined,
    take(frame: Frame): void {
      f.frames.push(frame);
      try {
        replica.apply(frame);
        onFrame?.(frame, replica);
      } catch (e) {
        f.errors.push(`${frame.type}: ${(e as Error).message}`);
      }
    },
  };
  return f;
}

const KINDS = ["snapshot@1", "reset@1", "patch@1", "chunk@1", "lagged@1", "gone@1", "error@1"];

/** The npm `eventsource` client (reconnects itself, after the server's `retry:`). */
export function eventSourceFollower(url: string, onFrame?: (f: Frame, r: Replica) => void): Follower {
  const f = follower("eventsource", onFrame);
  const es = new EventSource(url);
  es.addEventListener("open", () => f.connections++);
  for (const kind of KINDS)
    es.addEventListener(kind, (e) => {
      try {
        f.take(decodeSseMessage({ event: e.type, data: e.data, id: e.lastEventId }));
      } catch (err) {
        f.errors.push(`${kind}: ${(err as Error).message}`);
      }
    });
  f.close = () => es.close();
  return f;
}

/**
 * Raw HTTP with a parser of our choice, reconnecting 20 ms after a cut with `Last-Event-ID` set
 * to the last id the parser dispatched (as the SSE standard's reconnection does).
 */
export function rawFollower(url: string, parser: "eventsource-parser" | "strata", onFrame?: (f: Frame, r: Replica) => void): Follower {
  const f = follower(parser, onFrame);
  let closed = false;
  let lastId = "";
  const connect = (): void => {
    if (closed) return;
    let over = false;
    const again = (): void => {
      if (over) return;
      over = true;
      setTimeout(connect, 20);
    };
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastId !== "") headers["last-event-id"] = lastId;
    let feed: (chunk: Buffer) => void;
    let end: () => void;
    if (parser === "strata") {
      const d = new SseDecoder((frame) => f.take(frame));
      feed = (c) => {
        try {
          d.push(c);
        } catch (e) {
          f.errors.push(`decode: ${(e as Error).message}`);
        }
        lastId = d.lastEventId || lastId;
      };
      end = () => d.end();
    } else {
      const utf8 = new TextDecoder();
      const p = createParser({
        onEvent: (m) => {
          if (m.id !== undefined) lastId = m.id;
          try {
            f.take(decodeSseMessage(m));
          } catch (e) {
            f.errors.push(`decode: ${(e as Error).message}`);
          }
        },
      });
      feed = (c) => p.feed(utf8.decode(c, { stream: true }));
      end = () => p.reset();
    }
    const req = request(url, { headers }, (res) => {
      if (res.statusCode !== 200) {
        f.errors.push(`HTTP ${res.statusCode}`);
        res.resume();
        return;
      }
      f.connections++;
      res.on("data", feed);
      res.on("close", () => {
        end();
        again();
      });
    });
    req.on("error", again);
    req.end();
    f.close = () => {
      closed = true;
      req.destroy();
    };
  };
  connect();
  return f;
}
