/**
 * JSON Schemas of every command's --json document (CLI-8), built from one vocabulary (docs/cli.md
 * "JSON"): a key means the same kind of value in every document, so scripts may rely on it.
 * `VOCABULARY` is that table; `checkVocabulary` walks any document and reports a key used with
 * another kind of value.
 */
const sessionId = { type: "string", pattern: "^[0-9A-Z]{26}$" };
const handle = { type: "string", pattern: "^[0-9A-Z]{4,26}$" };
const eventId = { type: "integer", minimum: 1 };
const count = { type: "integer", minimum: 0 };
const ms = { type: "number" };
const branchName = { type: "string", minLength: 1 };
const nullable = (s: object) => ({ anyOf: [s, { type: "null" }] });
const absPath = { type: "string", pattern: "^/" };
const fileSide = {
  type: "object",
  required: ["hash", "mode", "size"],
  properties: { hash: { type: "string", pattern: "^[0-9a-f]{64}$" }, mode: { enum: ["644", "755", "link"] }, size: count },
};
/** A file change (`diff`, `bisect`, `rewind`): a diff of text, or sizes and hashes only. */
const fileChange = {
  type: "object",
  required: ["path", "change", "before", "after"],
  properties: {
    path: { type: "string", minLength: 1 },
    change: { enum: ["added", "modified", "deleted"] },
    before: nullable(fileSide),
    after: nullable(fileSide),
    binary: { type: "boolean" },
    diff: nullable({ type: "string" }),
  },
};
const fileDiff = { ...fileChange, required: [...fileChange.required, "binary", "diff"] };
const fileCounts = {
  type: "object",
  required: ["added", "modified", "deleted"],
  properties: { added: count, modified: count, deleted: count },
};
const work = {
  type: "object",
  required: ["terminate", "spawn", "retained"],
  properties: { terminate: { type: "array" }, spawn: { type: "array" }, retained: { type: "array" } },
};
const branch = {
  type: "object",
  required: ["name", "head", "eventCount", "origin", "originEvent", "created"],
  properties: {
    name: branchName,
    head: eventId,
    eventCount: count,
    origin: { enum: ["genesis", "fork", "rewind"] },
    originEvent: nullable(eventId),
    created: ms,
  },
};
/** Tokens and dollars of a part of a session (`cost`): summed, and per model. */
const tokenCounts = {
  tokens: count,
  inputTokens: count,
  outputTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  reasoningTokens: count,
  turns: count,
  cost: nullable({ type: "number", minimum: 0 }),
  recordedCost: nullable({ type: "number", minimum: 0 }),
};
const usage = {
  type: "object",
  required: [...Object.keys(tokenCounts), "unpriced", "models"],
  properties: {
    ...tokenCounts,
    unpriced: { type: "array", items: nullable({ type: "string" }) },
    models: {
      type: "array",
      items: {
        type: "object",
        required: ["model", ...Object.keys(tokenCounts), "price"],
        properties: { model: nullable({ type: "string" }), ...tokenCounts, price: nullable({ type: "object" }) },
      },
    },
  },
};
const stops = [
  "completed-by-tool",
  "env-completed",
  "end-turn",
  "max-steps",
  "budget",
  "context-overflow",
  "cancelled",
  "model-error",
  "prompt-error",
];

export const SCHEMAS = {
  ls: {
    type: "object",
    required: ["sessions"],
    properties: {
      sessions: {
        type: "array",
        items: {
          type: "object",
          required: [
            "id",
            "handle",
            "title",
            "created",
            "lastActivity",
            "lastLabel",
            "eventCount",
            "status",
            "outcome",
            "damage",
            "branches",
          ],
          properties: {
            id: sessionId,
            handle,
            title: nullable({ type: "string" }),
            created: ms,
            lastActivity: ms,
            eventCount: count,
            status: { type: "string" },
            outcome: { enum: ["completed", "stopped", "failed", "cancelled", "open", "idle", "empty", "damaged"] },
            damage: nullable({ type: "string" }),
            branches: { type: "array", items: branch },
          },
        },
      },
    },
  },
  log: {
    type: "object",
    required: ["session", "branch", "eventCount", "events"],
    properties: {
      session: sessionId,
      branch: branchName,
      eventCount: count,
      events: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "depth", "ts", "label", "by", "kind", "summary", "marks", "fileChanges"],
          properties: {
            id: eventId,
            ts: ms,
            summary: { type: "string" },
            marks: { type: "array", items: { type: "string" } },
            fileChanges: nullable(fileCounts),
          },
        },
      },
    },
  },
  run: {
    type: "object",
    required: ["session", "handle", "branch", "head", "resumed", "stop", "detail", "steps", "effective", "calls", "tokens"],
    properties: {
      session: sessionId,
      handle,
      branch: branchName,
      head: eventId,
      stop: { enum: stops },
      detail: nullable({ type: "string" }),
      steps: count,
      effective: count,
      calls: count,
      tokens: count,
      resumed: { type: "boolean" },
    },
  },
  fork: {
    type: "object",
    required: ["session", "branch", "head", "forkedAt", "sourceBranch", "dir", "fileCount", "filesFrom", "work"],
    properties: {
      session: sessionId,
      branch: branchName,
      head: eventId,
      forkedAt: eventId,
      sourceBranch: branchName,
      dir: absPath,
      fileCount: count,
      filesFrom: nullable(eventId),
      work,
    },
  },
  rewind: {
    type: "object",
    required: ["session", "branch", "head", "to", "keptAs", "outside", "dir", "files", "work"],
    properties: {
      session: sessionId,
      branch: branchName,
      head: eventId,
      to: eventId,
      keptAs: nullable(branchName),
      outside: nullable(eventId),
      dir: nullable(absPath),
      files: { type: "array", items: fileChange },
      work,
    },
  },
  checkout: {
    type: "object",
    required: ["session", "branch", "event", "dir", "fileCount", "writtenCount", "unchangedCount", "removedCount"],
    properties: {
      session: sessionId,
      branch: branchName,
      event: eventId,
      dir: absPath,
      fileCount: count,
      writtenCount: count,
      unchangedCount: count,
      removedCount: count,
    },
  },
  diff: {
    type: "object",
    required: ["session", "from", "to", "diff", "filesRecorded", "filesAt", "files"],
    properties: {
      session: sessionId,
      from: eventId,
      to: eventId,
      diff: { type: "object" },
      filesRecorded: { type: "boolean" },
      filesAt: {
        anyOf: [
          { type: "null" },
          { type: "object", required: ["from", "to"], properties: { from: eventId, to: eventId }, additionalProperties: false },
        ],
      },
      files: { type: "array", items: fileDiff },
    },
  },
  branches: {
    type: "object",
    required: ["session", "branches"],
    properties: { session: sessionId, branches: { type: "array", items: branch } },
  },
  prompt: {
    type: "object",
    required: ["session", "branch", "event", "request"],
    properties: {
      session: sessionId,
      branch: branchName,
      event: eventId,
      request: {
        type: "object",
        required: ["system", "messages", "tools", "settings"],
        properties: {
          system: { type: "string" },
          messages: {
            type: "array",
            items: { type: "object", required: ["role", "content"], properties: { role: { enum: ["user", "assistant", "tool"] } } },
          },
          tools: { type: "array", items: { type: "object", required: ["name", "description", "parameters"] } },
        },
      },
    },
  },
  promptDiff: {
    type: "object",
    required: ["session", "branch", "from", "to", "same", "changes"],
    properties: { session: sessionId, from: eventId, to: eventId, same: { type: "boolean" }, changes: { type: "array" } },
  },
  bisect: {
    type: "object",
    required: ["session", "branch", "event", "label", "probes", "until", "matches", "diff", "files"],
    properties: {
      session: sessionId,
      event: eventId,
      probes: count,
      until: { type: "array", items: { type: "string" } },
      matches: { type: "array", items: { type: "integer" } },
      files: { type: "array", items: fileDiff },
    },
  },
  import: {
    type: "object",
    required: ["session", "importedFrom", "branchCount", "eventCount", "blobCount", "verified"],
    properties: {
      session: sessionId,
      importedFrom: sessionId,
      branchCount: count,
      eventCount: count,
      blobCount: count,
      verified: { const: true },
    },
  },
  verify: {
    type: "object",
    required: ["ok", "session", "sessionCount", "eventCount", "snapshotCount", "blobCount", "findings"],
    properties: {
      ok: { type: "boolean" },
      session: nullable(sessionId),
      sessionCount: count,
      eventCount: count,
      snapshotCount: count,
      blobCount: count,
      findings: {
        type: "array",
        items: { type: "object", required: ["code", "session", "event", "message"], properties: { event: nullable(eventId) } },
      },
    },
  },
  replay: {
    type: "object",
    required: ["session", "branch", "head", "ok", "eventCount", "snapshotCount", "mismatch"],
    properties: {
      session: sessionId,
      head: eventId,
      ok: { type: "boolean" },
      eventCount: count,
      snapshotCount: count,
      mismatch: nullable({ type: "object" }),
    },
  },
  rerun: {
    type: "object",
    required: [
      "session",
      "sourceBranch",
      "branch",
      "forkedAt",
      "turns",
      "calls",
      "rerunSafe",
      "recordedNever",
      "stop",
      "divergence",
      "endedAt",
      "dir",
      "filesCompared",
    ],
    properties: {
      session: sessionId,
      sourceBranch: branchName,
      branch: branchName,
      forkedAt: eventId,
      endedAt: { type: ["string", "null"] },
      dir: absPath,
      filesCompared: { type: "boolean" },
      stop: nullable({ enum: stops }),
      divergence: nullable({ type: "object", required: ["what", "source", "rerun", "before", "after", "message"] }),
    },
  },
  show: {
    type: "object",
    required: ["session", "branch", "event", "matchCount", "elements"],
    properties: { session: sessionId, branch: branchName, event: eventId, matchCount: nullable(count), elements: { type: "array" } },
  },
  showFiles: {
    type: "object",
    required: ["session", "branch", "event", "recorded", "dir", "fileCount", "files"],
    properties: {
      session: sessionId,
      branch: branchName,
      event: eventId,
      recorded: { type: "boolean" },
      dir: nullable(absPath),
      fileCount: count,
      files: {
        type: "array",
        items: { ...fileSide, required: ["path", ...fileSide.required], properties: { ...fileSide.properties, path: { type: "string" } } },
      },
    },
  },
  search: {
    type: "object",
    required: ["query", "session", "hits", "next", "indexedCount"],
    properties: {
      query: { type: "string", minLength: 1 },
      session: nullable(sessionId),
      next: nullable(eventId),
      indexedCount: count,
      hits: {
        type: "array",
        items: {
          type: "object",
          required: ["address", "session", "handle", "event", "ts", "label", "by", "kind", "snippet", "marks"],
          properties: {
            address: { type: "string", pattern: "^[0-9A-Z]{4,26}@[1-9][0-9]*$" },
            session: sessionId,
            handle,
            event: eventId,
            ts: ms,
            label: nullable({ type: "string" }),
            by: nullable({ type: "string" }),
            kind: { type: "string" },
            snippet: { type: "string" },
            marks: { type: "array", items: { type: "array", items: count, minItems: 2, maxItems: 2 } },
          },
        },
      },
    },
  },
  cost: {
    type: "object",
    required: ["session", "handle", "branch", "prices", "currency", "eventCount", "branches", "distinct"],
    properties: {
      session: sessionId,
      handle,
      branch: nullable(branchName),
      prices: nullable(absPath),
      currency: { const: "USD" },
      eventCount: count,
      branches: {
        type: "array",
        items: {
          type: "object",
          required: [...branch.required, "forkedAt", "inherited", "own", "total"],
          properties: { ...branch.properties, forkedAt: nullable(eventId), inherited: usage, own: usage, total: usage },
        },
      },
      distinct: usage,
    },
  },
  serve: { type: "object", required: ["url", "token", "db"], properties: { url: { type: "string" }, token: nullable({ type: "string" }) } },
  error: {
    type: "object",
    required: ["error"],
    properties: { error: { type: "object", required: ["code", "message"], properties: { code: { enum: [1, 2, 3, 130] } } } },
  },
} as const;

/**
 * The vocabulary: what each key holds wherever it appears at the top of a document or in a listed
 * object. `id` is the id of the object it is in (a session in `sessions`, an event in `events`, an
 * element in `elements`); every other reference names its kind.
 */
export const VOCABULARY: Readonly<Record<string, "session" | "event" | "branch" | "count" | "array" | "time" | "handle" | "path">> = {
  session: "session",
  importedFrom: "session",
  handle: "handle",
  head: "event",
  event: "event",
  forkedAt: "event",
  from: "event",
  to: "event",
  originEvent: "event",
  outside: "event",
  next: "event",
  filesFrom: "event",
  branch: "branch",
  sourceBranch: "branch",
  keptAs: "branch",
  sessions: "array",
  branches: "array",
  events: "array",
  elements: "array",
  findings: "array",
  matches: "array",
  changes: "array",
  marks: "array",
  dropped: "array",
  files: "array",
  paths: "array",
  hits: "array",
  until: "array",
  eventCount: "count",
  branchCount: "count",
  blobCount: "count",
  sessionCount: "count",
  snapshotCount: "count",
  matchCount: "count",
  fileCount: "count",
  indexedCount: "count",
  writtenCount: "count",
  unchangedCount: "count",
  removedCount: "count",
  keptBlobCount: "count",
  byteCount: "count",
  keptByteCount: "count",
  fileByteCount: "count",
  dir: "path",
  created: "time",
  lastActivity: "time",
  ts: "time",
  archived: "time",
  models: "array",
  unpriced: "array",
  prices: "path",
  tokens: "count",
  turns: "count",
  inputTokens: "count",
  outputTokens: "count",
  cacheReadTokens: "count",
  cacheWriteTokens: "count",
  reasoningTokens: "count",
};

/** Every place in `doc` where a vocabulary key holds another kind of value (null is allowed). */
export function checkVocabulary(doc: unknown, path = "$"): string[] {
  const problems: string[] = [];
  if (Array.isArray(doc)) for (const [i, d] of doc.entries()) problems.push(...checkVocabulary(d, `${path}[${i}]`));
  else if (typeof doc === "object" && doc !== null) {
    // below these, the values are trees, diffs and requests: their own formats, not the CLI's
    for (const [k, v] of Object.entries(doc)) {
      if (["diff", "request", "work", "error", "attrs", "divergence", "mismatch"].includes(k)) continue;
      const kind = VOCABULARY[k];
      if (kind !== undefined && v !== null) {
        const ok =
          kind === "session"
            ? typeof v === "string" && /^[0-9A-Z]{26}$/.test(v)
            : kind === "handle"
              ? typeof v === "string" && /^[0-9A-Z]{4,26}$/.test(v)
              : kind === "event"
                ? Number.isSafeInteger(v) && (v as number) > 0
                : kind === "branch"
                  ? typeof v === "string" && v.length > 0
                  : kind === "count"
                    ? Number.isSafeInteger(v) && (v as number) >= 0
                    : kind === "time"
                      ? typeof v === "number"
                      : kind === "path"
                        ? typeof v === "string" && v.startsWith("/")
                        : Array.isArray(v);
        if (!ok) problems.push(`${path}.${k} should be a ${kind}, got ${JSON.stringify(v)?.slice(0, 60)}`);
      }
      problems.push(...checkVocabulary(v, `${path}.${k}`));
    }
  }
  return problems;
}
