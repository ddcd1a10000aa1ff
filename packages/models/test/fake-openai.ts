/**
 * A local HTTP server that speaks the chat-completions streaming protocol, for the client's tests.
 * Each request is answered by the next scripted `Reply`; every request body is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Reply =
  /** Stream these chunk objects as `data:` lines, then `[DONE]` unless `noDone`. */
  | { readonly kind: "stream"; readonly chunks: readonly unknown[]; readonly noDone?: boolean; readonly delayMs?: number }
  /** Stream these chunks and then destroy the socket mid-response. */
  | { readonly kind: "drop"; readonly chunks: readonly unknown[] }
  | { readonly kind: "status"; readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }
  /** Send the headers and some chunks, then stay silent. */
  | { readonly kind: "hang"; readonly chunks: readonly unknown[] }
  /** Send these bytes as they are, in writes of `pieceBytes` (default: one write), each on its own tick. */
  | {
      readonly kind: "raw";
      readonly body: string | Uint8Array;
      readonly status?: number;
      readonly headers?: Record<string, string>;
      readonly pieceBytes?: number;
    }
  /** Send the headers, then `piece` over and over until the client goes away. */
  | { readonly kind: "endless"; readonly status: number; readonly headers?: Record<string, string>; readonly piece: string };

export interface FakeServer {
  readonly url: string;
  /** Every request, with the time it arrived (`performance.now()`, measured at the server). */
  readonly requests: { url: string; headers: IncomingMessage["headers"]; body: Record<string, unknown>; at: number }[];
  replies: Reply[];
  close(): Promise<void>;
}

export async function startFake(replies: Reply[] = []): Promise<FakeServer> {
  const requests: FakeServer["requests"] = [];
  const sockets = new Set<import("node:net").Socket>();
  const state = { replies };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      raw += c;
    });
    req.on("end", async () => {
      requests.push({ url: req.url ?? "", headers: req.headers, body: JSON.parse(raw) as Record<string, unknown>, at: performance.now() });
      const reply = state.replies.shift();
      if (reply === undefined) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the fake has no reply left" } }));
        return;
      }
      if (reply.kind === "status") {
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
        return;
      }
      if (reply.kind === "raw") {
        res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
        const bytes = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : Buffer.from(reply.body);
        const size = reply.pieceBytes ?? bytes.length;
        for (let i = 0; i < bytes.length; i += size) {
          res.write(bytes.subarray(i, i + size));
          // a tick between writes so they leave as separate segments
          if (size < bytes.length) await new Promise((r) => setImmediate(r));
        }
        res.end();
        return;
      }
      if (reply.kind === "endless") {
        res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers });
        const more = (): void => {
          while (res.write(reply.piece)) if (res.destroyed) return;
          res.once("drain", more);
        };
        res.on("error", () => {}); // the client hanging up mid-write is the point
        res.on("close", () => res.removeAllListeners("drain"));
        more();
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const chunk of reply.chunks) {
        const raw =
          typeof chunk === "object" && chunk !== null && "raw" in chunk ? String((chunk as { raw: unknown }).raw) : JSON.stringify(chunk);
        res.write(`data: ${raw}\n\n`);
        if (reply.kind === "stream" && reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      }
      if (reply.kind === "drop") {
        await new Promise((r) => setTimeout(r, 20));
        res.socket?.destroy();
        return;
      }
      if (reply.kind === "hang") return;
      if (!reply.noDone) res.write("data: [DONE]\n\n");
      res.end();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get replies() {
      return state.replies;
    },
    set replies(r: Reply[]) {
      state.replies = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Helpers that build protocol chunks. */
export const chunk = {
  text: (content: string) => ({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  }),
  role: () => ({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
  }),
  call: (index: number, id: string, name: string, args = "") => ({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [
      { index: 0, delta: { tool_calls: [{ index, id, type: "function", function: { name, arguments: args } }] }, finish_reason: null },
    ],
  }),
  args: (index: number, args: string) => ({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args } }] }, finish_reason: null }],
  }),
  finish: (reason: string) => ({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: reason }] }),
  usage: (prompt: number, completion: number) => ({
    id: "c1",
    object: "chat.completion.chunk",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  }),
};
