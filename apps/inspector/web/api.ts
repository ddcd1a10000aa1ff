/** The inspector's view of the server's JSON (IN-2 … IN-4). Everything here is read-only. */

export interface SessionRow {
  id: string;
  title: string | null;
  created: number;
  branches: number;
  events: number;
  lastActivity: number;
  lastLabel: string | null;
}

export interface Branch {
  name: string;
  head: number;
  events: number;
  origin: "genesis" | "fork" | "rewind";
  originEvent: number | null;
  originDepth: number | null;
  created: number;
}

export interface SessionInfo {
  id: string;
  title: string | null;
  created: number;
  branches: Branch[];
}

export interface EventRow {
  id: number;
  prior: number | null;
  depth: number;
  ts: number;
  kind: string;
  label: string | null;
  by: string | null;
}

export interface NodeJson {
  id: number;
  tag: string;
  attrs: Record<string, string>;
  text?: string;
  /** Present when `text` was cut: the full length (GET …/text has it all). */
  textLength?: number;
  childCount?: number;
  /** Children, with skipped runs as `{elided: [from, to]}` (GET …/children has them). */
  children?: (NodeJson | Elided)[];
}

export interface Elided {
  /** The children between these two siblings were skipped (no `after`: from the first; `before` 0: to the end). */
  elided: { after?: number; before: number };
}

export interface Spec {
  tag: string;
  attrs?: Record<string, string>;
  text?: string;
  children?: Spec[];
  id?: number;
}

export interface TreeDiff {
  added: { id: number; at: { parent: number; after: number | null }; node: Spec }[];
  removed: { id: number; at: { parent: number; after: number | null }; node: Spec }[];
  attrs: { id: number; name: string; before: string | null; after: string | null }[];
  text: { id: number; before: string; after: string }[];
  moved: { id: number; from: { parent: number; after: number | null }; to: { parent: number; after: number | null } }[];
  hwm: { before: number; after: number };
}

export interface Request {
  system: string;
  messages: { role: string; content: string; toolCallId?: string; toolCalls?: { id: string; name: string; arguments: string }[] }[];
  tools: { name: string; description: string; parameters: unknown }[];
  settings: Record<string, unknown>;
}

/** The token the page was opened with (`?token=`), passed on to every request. */
export const token = new URLSearchParams(location.search).get("token");

export function apiUrl(path: string, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  if (token !== null) q.set("token", token);
  const s = q.toString();
  return `/api/${path}${s === "" ? "" : `?${s}`}`;
}

export async function api<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const res = await fetch(apiUrl(path, params), { headers: { accept: "application/json" } });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`);
  return body as T;
}

/** Text for display: control characters (ANSI escapes, NUL …) shown as symbols, never interpreted. */
export function visible(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, (c) =>
    c === "\u001b" ? "␛" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

export function time(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}
