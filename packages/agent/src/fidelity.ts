/**
 * Replay fidelity (PR-16, PR-17, decision 0017): every past request is re-rendered from the tree
 * at the event before its turn and compared with the digest the loop recorded when it sent it
 * (requests.ts). A mismatch names the turn's event and the part that differs, with a diff: the
 * system text, the tool set and the settings are stored as blobs, so their diff is exact; for the
 * messages the record keeps hashes, so the diff names the first message that differs, where it
 * comes from, and shows it as it renders now. Over the asynchronous port the turns are collected
 * during the fold and checked after it, the blobs they read fetched in one call per 500.
 */
import { createHash } from "node:crypto";
import type { NodeId, Tree } from "@strata/dom";
import { type Answer, bodyOf, EngineError, materializeVersion, metaOf, type Port, type Session } from "@strata/engine";
import { type AsyncStore, type EventId, type EventMeta, isAsyncStore, type Store } from "@strata/store";
import { readInputs } from "./inputs.ts";
import type { ModelRequest } from "./model.ts";
import { fetchBlobs } from "./port.ts";
import { type BlobText, blobReader, contribute, inputBlobs, ProjectionMemo, projectRequest } from "./prompt.ts";
import { canonicalJson, type RequestDigest, RequestDigester, type RequestRecord, readRecord } from "./requests.ts";
import { lineDiff } from "./textdiff.ts";
import { ATTR, LABEL, META, ROLE, TAG } from "./vocabulary.ts";

/** The parts of a request, in the order they are compared; "record" is a record that does not fold its own parts. */
export type RequestPart = "system" | "tools" | "settings" | "messages" | "record";

export interface RequestMismatch {
  /** The `turn.start` event that recorded the request. */
  readonly event: EventId;
  /** The event the request was rendered at (the one before `event`). */
  readonly at: EventId;
  /** The assistant turn the request was sent for. */
  readonly turn: NodeId;
  /** The first part that differs, and all of them. */
  readonly part: RequestPart;
  readonly parts: readonly RequestPart[];
  /** For `messages`: the index of the first message that differs. */
  readonly message?: number;
  /** The recorded and the re-rendered hash of `part`. */
  readonly recorded: string;
  readonly rendered: string;
  /** One line: what differs, where. */
  readonly detail: string;
  /** For a person: `- ` as recorded, `+ ` as rendered now, `  ` unchanged (or why no diff can be shown). */
  readonly diff: string;
}

export interface RequestsReport {
  /** No recorded request differs from its re-rendering. */
  readonly ok: boolean;
  readonly branch: string;
  readonly head: EventId;
  /** Model turns on the branch (`turn.start` events). */
  readonly turns: number;
  /** Turns whose request re-renders to exactly what was recorded. */
  readonly verified: number;
  /** Turns without a record (written by a strata that did not record requests). */
  readonly unrecorded: number;
  /** Turns that differ, counted past `limit` too. */
  readonly mismatched: number;
  /** The first `limit` turns that differ, oldest first. */
  readonly mismatches: readonly RequestMismatch[];
}

export interface VerifyRequestsOptions {
  /** The branch to check (default: the session's). */
  readonly branch?: string;
  /** Mismatches described at most (default 20); more are counted. */
  readonly limit?: number;
  /** Called as events are folded (for progress display). */
  readonly progress?: (done: number, total: number) => void;
}

/**
 * Re-renders every recorded request of a branch and compares it with its record. One pass over
 * the log from genesis (each request is rendered at the tree its turn followed), projecting with
 * a memo, so the cost is the log plus what each request adds. Reports, never throws for a
 * mismatch; throws `EngineError` for a branch that does not exist or a log that does not replay.
 */
export function verifyRequests<P extends Port>(session: Session<P>, options: VerifyRequestsOptions = {}): Answer<P, RequestsReport> {
  if (isAsyncStore(session.store)) return verifyRequestsAsync(session as Session<AsyncStore>, options) as Answer<P, RequestsReport>;
  return verifyRequestsSync(session as Session<Store>, options) as Answer<P, RequestsReport>;
}

function verifyRequestsSync(session: Session, options: VerifyRequestsOptions): RequestsReport {
  const store = session.store;
  const branch = options.branch ?? session.branch;
  const b = store.branch(session.id, branch);
  if (b === undefined) throw new EngineError("not-found", `session ${session.id} has no branch "${branch}"`);
  const metas = store.chainMeta(b.head);
  // Each turn checked as the fold reaches it: nothing but the fold's own state is kept.
  const checks = new Checks(store, blobReader(store), options.limit ?? 20);
  const fold = turnsOf(metas, options.progress, (t) => checks.take(t));
  materializeVersion(store, b.head, { fromGenesis: true, onEvent: fold.onEvent });
  options.progress?.(metas.length, metas.length);
  return checks.report(branch, b.head, fold.counts);
}

/** {@link verifyRequests} over the asynchronous port: the turns gathered in the fold, checked after it. */
async function verifyRequestsAsync(session: Session<AsyncStore>, options: VerifyRequestsOptions): Promise<RequestsReport> {
  const store = session.store;
  const branch = options.branch ?? session.branch;
  const b = await store.branch(session.id, branch);
  if (b === undefined) throw new EngineError("not-found", `session ${session.id} has no branch "${branch}"`);
  const metas = await store.chainMeta(b.head);
  const found: RecordedTurn[] = [];
  const fold = turnsOf(metas, options.progress, (t) => void found.push(t));
  await materializeVersion(store, b.head, { fromGenesis: true, onEvent: fold.onEvent });
  // The blobs the checks read (each turn's inputs and its record's parts), fetched before them.
  const fetched = await fetchBlobs(
    store,
    found.flatMap((t) => [...inputBlobs(readInputs(t.before)), t.record.system, t.record.tools, t.record.settings]),
  );
  const checks = new Checks({ path: store.path, getBlob: (h) => fetched.bytes.get(h) }, (h) => fetched.text(h), options.limit ?? 20);
  for (const t of found) checks.take(t);
  options.progress?.(metas.length, metas.length);
  return checks.report(branch, b.head, fold.counts);
}

/** A recorded request found in the fold: the tree it was rendered at, and the tree holding its record. */
interface RecordedTurn {
  readonly event: EventId;
  readonly at: EventId;
  readonly turn: NodeId;
  readonly before: Tree;
  readonly after: Tree;
  readonly record: RequestRecord;
}

/** The fold's `onEvent`: counts the model turns (and those without a record), and hands each recorded one to `take`. */
function turnsOf(
  metas: readonly EventMeta[],
  progress: VerifyRequestsOptions["progress"],
  take: (t: RecordedTurn) => void,
): { onEvent: (tree: Tree, event: EventId, done: number) => void; counts: { turns: number; unrecorded: number } } {
  const counts = { turns: 0, unrecorded: 0 };
  let before: { tree: Tree; event: EventId } | undefined;
  const onEvent = (tree: Tree, event: EventId, done: number): void => {
    if (done % 5000 === 0) progress?.(done, metas.length);
    const meta = metas[done - 1] as EventMeta | undefined;
    if (meta?.label === LABEL.turnStart && before !== undefined) {
      counts.turns++;
      const turn = newAssistantTurn(before.tree, tree);
      const record = turn === undefined ? undefined : readRecord(tree, turn);
      if (turn === undefined || record === undefined) counts.unrecorded++;
      else take({ event, at: before.event, turn: turn as NodeId, before: before.tree, after: tree, record });
    }
    before = { tree, event };
  };
  return { onEvent, counts };
}

/** The checks of recorded turns, in the order taken, and what they found. */
class Checks {
  readonly #memo = new ProjectionMemo();
  readonly #digester = new RequestDigester();
  readonly #mismatches: RequestMismatch[] = [];
  #verified = 0;
  #mismatched = 0;

  constructor(
    private readonly store: Pick<Store, "getBlob" | "path">,
    private readonly read: BlobText,
    private readonly limit: number,
  ) {}

  take(t: RecordedTurn): void {
    const found = check(this.store, this.read, this.#memo, this.#digester, t.before, t.after, t.record);
    if (found === undefined) this.#verified++;
    else {
      this.#mismatched++;
      if (this.#mismatches.length < this.limit) this.#mismatches.push({ event: t.event, at: t.at, turn: t.turn, ...found });
    }
  }

  report(branch: string, head: EventId, counts: { turns: number; unrecorded: number }): RequestsReport {
    const mismatched = this.#mismatched;
    return { ok: mismatched === 0, branch, head, ...counts, verified: this.#verified, mismatched, mismatches: this.#mismatches };
  }
}

/** The assistant turn the event appended (the last child of `<body>`, minted by it), if any. */
function newAssistantTurn(before: Tree, after: Tree): number | undefined {
  const last = after.rec(bodyOf(after).id)?.last ?? 0;
  const r = last === 0 ? undefined : after.rec(last);
  if (r === undefined || r.tag !== TAG.turn || r.attrs[ATTR.role] !== ROLE.assistant || last <= before.hwm) return undefined;
  return last;
}

type Found = Omit<RequestMismatch, "event" | "at" | "turn">;
/** What one part's comparison says. */
type PartFinding = Omit<Found, "part" | "parts">;

/** Why the request rendered at `before` differs from `record` (in `after`), or undefined. */
function check(
  store: Pick<Store, "getBlob" | "path">,
  read: BlobText,
  memo: ProjectionMemo,
  digester: RequestDigester,
  before: Tree,
  after: Tree,
  record: RequestRecord,
): Found | undefined {
  let request: ModelRequest;
  try {
    request = projectRequest(before, read, readInputs(before), memo);
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    return {
      part: "system",
      parts: ["system"],
      recorded: record.system,
      rendered: "",
      detail: `the request cannot be rendered any more: ${message}`,
      diff: `+ (no request: ${message})`,
    };
  }
  const { digest, toolsJson, settingsJson } = digester.digest(request);
  if (digest.hash === record.hash) return undefined;
  // The recorded bytes of a part, diffed with the rendered ones (or why they cannot be).
  const against = (what: string, hash: string, now: string, shape: (text: string) => string = (t) => t): string => {
    const bytes = store.getBlob(hash);
    if (bytes === undefined) return `(the recorded ${what}, blob ${hash.slice(0, 16)}…, is not in the store)`;
    const diff = lineDiff(shape(bytes.toString("utf8")), shape(now));
    // A blob is shared by everything with the same bytes: an edit of an input's blob can edit the record's too.
    if (sha256Hex(bytes) !== hash)
      return `(the recorded ${what}, blob ${hash.slice(0, 16)}…, was changed in the store: its bytes no longer hash to its address)${diff === "" ? "" : `\n${diff}`}`;
    return diff;
  };
  const findings: [RequestPart, PartFinding][] = [];
  if (digest.system !== record.system)
    findings.push([
      "system",
      {
        recorded: record.system,
        rendered: digest.system,
        detail: "the system prompt renders differently",
        diff: against("system text", record.system, request.system),
      },
    ]);
  if (digest.tools !== record.tools)
    findings.push([
      "tools",
      {
        recorded: record.tools,
        rendered: digest.tools,
        detail: "the tool set differs",
        diff: against("tool set", record.tools, toolsJson, perItem),
      },
    ]);
  if (digest.settings !== record.settings)
    findings.push([
      "settings",
      {
        recorded: record.settings,
        rendered: digest.settings,
        detail: "the model settings differ",
        diff: against("settings", record.settings, settingsJson),
      },
    ]);
  if (digest.chain !== record.chain || digest.messages.length !== record.count)
    findings.push(["messages", messagesMismatch(before, after, record, digest, request)]);
  if (findings.length === 0)
    findings.push([
      "record",
      {
        recorded: record.hash,
        rendered: digest.hash,
        detail: `record #${record.element} does not fold its own parts: the record is damaged`,
        diff: `- hash ${record.hash}\n+ hash ${digest.hash} (of the same parts)`,
      },
    ]);
  const [part, first] = findings[0] as [RequestPart, PartFinding];
  const parts = findings.map(([p]) => p);
  if (findings.length === 1) return { part, parts, ...first };
  // Every part that differs is shown, the first one's hashes reported.
  return {
    part,
    parts,
    ...first,
    detail: findings.map(([, f]) => f.detail).join("; "),
    diff: findings.map(([p, f]) => `── ${p} ──\n${f.diff}`).join("\n"),
  };
}

/** A JSON array's elements, one canonical line each (how the tool set diff is shown). */
function perItem(json: string): string {
  try {
    const v = JSON.parse(json) as unknown;
    if (Array.isArray(v)) return v.map((x) => canonicalJson(x)).join("\n");
  } catch {
    // shown as it is
  }
  return json;
}

function messagesMismatch(before: Tree, after: Tree, record: RequestRecord, digest: RequestDigest, request: ModelRequest): PartFinding {
  const recorded = recordedHashes(after, record);
  const now = digest.messages;
  if (typeof recorded === "string")
    return {
      recorded: record.chain,
      rendered: digest.chain,
      detail: `the messages differ (${record.count} recorded, ${now.length} now); ${recorded}`,
      diff: `- ${record.count} messages, chain ${record.chain}\n+ ${now.length} messages, chain ${digest.chain}`,
    };
  let k = 0;
  while (k < recorded.length && k < now.length && recorded[k] === now[k]) k++;
  const m = request.messages[k];
  const shown = m === undefined ? "(no such message now)" : clip(canonicalJson(m));
  const source = sourceOf(before, k);
  const where = `message ${k + 1} of ${now.length}${m === undefined ? "" : ` (${m.role}${source === undefined ? "" : `, from element #${source}`})`}`;
  const lines = [`  ${k} earlier messages are as recorded`];
  lines.push(
    k < recorded.length
      ? `- message ${k + 1}: sha256 ${recorded[k]} (the record keeps hashes of messages, not their text)`
      : `- (the recorded request had ${recorded.length} messages)`,
  );
  lines.push(k < now.length ? `+ message ${k + 1}: sha256 ${now[k]}` : `+ (the request has ${now.length} messages now)`);
  if (m !== undefined) lines.push(`+ ${shown}`);
  return {
    message: k,
    recorded: recorded[k] ?? "",
    rendered: now[k] ?? "",
    detail: `${where} renders differently (${recorded.length} messages recorded, ${now.length} now)`,
    diff: lines.join("\n"),
  };
}

/**
 * The message hashes a record stands for, read back through its `prev` records (each names an
 * earlier one, so the walk ends), or why they cannot be.
 */
function recordedHashes(tree: Tree, record: RequestRecord): string[] | string {
  const out: string[] = new Array(record.count);
  let limit = record.count;
  for (let r: RequestRecord = record; ; ) {
    if (r.tail.length !== r.count - r.base) return `record #${r.element} lists ${r.tail.length} hashes for ${r.count - r.base} messages`;
    if (limit > r.count) return `record #${r.element} has ${r.count} messages, fewer than a later record takes from it`;
    for (let k = r.base; k < limit; k++) out[k] = r.tail[k - r.base] as string;
    if (r.base === 0) return out;
    limit = r.base;
    const prev = r.prev;
    const turn = prev === undefined ? undefined : tree.rec(prev)?.parent;
    const p = turn === undefined ? undefined : readRecord(tree, turn);
    if (prev === undefined || p === undefined || p.element !== prev || prev >= r.element)
      return `record #${r.element} takes ${r.base} messages from record #${prev ?? "?"}, which cannot be read`;
    r = p;
  }
}

/** The element message `k` of the request at `tree` comes from (the compaction, or a body element). */
function sourceOf(tree: Tree, k: number): number | undefined {
  const body = bodyOf(tree);
  const compaction = metaOf(tree).children.findLast((c) => c.tag === META.compaction);
  const through = compaction === undefined ? undefined : Number(compaction.attrs[ATTR.through]);
  let hidden = through !== undefined && tree.rec(through)?.parent === body.id ? through : undefined;
  let n = 0;
  if (hidden !== undefined) {
    if (k === 0) return compaction?.id;
    n = 1;
  }
  const synthetic = readInputs(tree).synthetic;
  for (const el of body.children) {
    if (hidden !== undefined) {
      if (el.id === hidden) hidden = undefined;
      continue;
    }
    n += contribute(el, synthetic).length;
    if (n > k) return el.id;
  }
  return undefined;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function clip(text: string, max = 2000): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
