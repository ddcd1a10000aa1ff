/** JSON Schemas of every command's --json document (CLI-8): scripts may rely on these fields. */
const id = { type: "string", pattern: "^[0-9A-Z]{26}$" };
const event = { type: "integer", minimum: 1 };
const work = {
  type: "object",
  required: ["terminate", "spawn", "retained"],
  properties: { terminate: { type: "array" }, spawn: { type: "array" }, retained: { type: "array" } },
};
const diff = { type: "object" };

export const SCHEMAS = {
  ls: {
    type: "object",
    required: ["sessions"],
    properties: {
      sessions: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "title", "created", "branches", "events", "lastActivity", "status"],
          properties: {
            id,
            title: { type: ["string", "null"] },
            events: { type: "integer" },
            status: { type: "string" },
            branches: { type: "array", items: { type: "object", required: ["name", "head", "events", "origin"] } },
          },
        },
      },
    },
  },
  log: {
    type: "object",
    required: ["session", "branch", "total", "events"],
    properties: {
      session: id,
      events: {
        type: "array",
        items: {
          type: "object",
          required: ["id", "depth", "ts", "label", "by", "kind", "summary", "marks"],
          properties: { id: event, summary: { type: "string" } },
        },
      },
    },
  },
  run: {
    type: "object",
    required: ["session", "branch", "head", "stop", "steps", "effective", "calls", "tokens"],
    properties: {
      session: id,
      head: event,
      stop: {
        enum: ["completed-by-tool", "env-completed", "end-turn", "max-steps", "budget", "context-overflow", "cancelled", "model-error"],
      },
      steps: { type: "integer" },
    },
  },
  fork: { type: "object", required: ["session", "branch", "head", "from", "work"], properties: { session: id, head: event, work } },
  rewind: { type: "object", required: ["session", "branch", "head", "keptAs", "work"], properties: { session: id, head: event, work } },
  diff: { type: "object", required: ["session", "from", "to", "diff"], properties: { session: id, from: event, to: event, diff } },
  branches: {
    type: "object",
    required: ["session", "branches"],
    properties: { session: id, branches: { type: "array", items: { type: "object", required: ["name", "head"] } } },
  },
  prompt: {
    type: "object",
    required: ["session", "event", "request"],
    properties: {
      session: id,
      event,
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
  bisect: {
    type: "object",
    required: ["session", "branch", "event", "label", "steps", "matches"],
    properties: { session: id, event, matches: { type: "array", items: { type: "integer" } } },
  },
  import: {
    type: "object",
    required: ["session", "from", "branches", "events", "blobs", "verified"],
    properties: { session: id, from: id, verified: { const: true } },
  },
  verify: { type: "object", required: ["ok", "findings"], properties: { ok: { type: "boolean" }, findings: { type: "array" } } },
  replay: { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } },
  rerun: {
    type: "object",
    required: ["session", "source", "branch", "forkedAt", "turns", "calls", "rerunSafe", "recordedNever", "stop"],
    properties: {
      session: id,
      forkedAt: event,
      divergence: { type: "object", required: ["what", "source", "rerun", "before", "after", "message"] },
    },
  },
  show: {
    type: "object",
    required: ["session", "branch", "event", "elements"],
    properties: { session: id, event, elements: { type: "array" } },
  },
  error: { type: "object", required: ["error"], properties: { error: { type: "object", required: ["code", "message"] } } },
} as const;
