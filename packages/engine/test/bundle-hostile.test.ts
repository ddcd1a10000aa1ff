/**
 * EN-32: a damaged or hostile bundle — one case per kind of damage — is refused with a closed code
 * and the path of the damage, and the database it was imported into stays byte-for-byte as it
 * was (sha256 of the file before and after, and verify). Real SQLite files in temp dirs.
 */
import { nodeId } from "@strata/dom";
import { eventDigest, openStore, type SessionId, type Store } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BUNDLE_FORMAT_V1,
  type Bundle,
  BundleError,
  type decodeBundle,
  exportBundle,
  importBundle,
  Session,
  verifyStore,
} from "../src/index.ts";
import { cleanup, fileStore, richSession, sha } from "./bundle-kit.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests damage bundles field by field
type Json = any;

afterAll(cleanup);

let source: Store;
let sourceSession: SessionId;
let pristine: Bundle;
/** A fresh, writable JSON copy of the rich session's bundle. */
const copy = (): Json => JSON.parse(JSON.stringify(pristine));

beforeAll(() => {
  source = fileStore("source.db").store;
  sourceSession = richSession(source);
  pristine = exportBundle(source, sourceSession);
});

/** One kind of damage: what it does to the bundle, and the error it must meet. */
interface Damage {
  readonly name: string;
  readonly damage: (b: Json) => Json;
  readonly code?: BundleError["code"];
  /** The path the error names (a function: computed from the undamaged bundle). */
  readonly path?: string | ((b: Bundle) => string);
  readonly message: RegExp;
  readonly limits?: Parameters<typeof decodeBundle>[1] extends infer O ? (O extends { limits?: infer L } ? L : never) : never;
}

/** A damage that edits the bundle in place. */
const edit =
  (f: (b: Json) => void) =>
  (b: Json): Json => {
    f(b);
    return b;
  };

/** The digests of every event recomputed from the (damaged) content: an attacker can do it too. */
function resign(b: Json): Json {
  const digests = new Map<number, string>();
  for (const e of b.events) {
    e.digest = eventDigest(e.prior === null ? null : (digests.get(e.prior) ?? null), e);
    digests.set(e.id, e.digest);
  }
  return b;
}
/** A damage to events, with the digests recomputed so that the checks behind the digest chain meet it. */
const resigned =
  (f: (b: Json) => void) =>
  (b: Json): Json => {
    f(b);
    return resign(b);
  };

const E = 5; // an event on every branch's history, neither the first nor a head

/** Puts `text` right after the first `{` that follows `anchor` in the bundle's JSON. */
function inject(b: Json, anchor: string, text: string): Json {
  const json = JSON.stringify(b);
  const at = json.indexOf(anchor) + anchor.length;
  return JSON.parse(`${json.slice(0, at)}${text}${json.slice(at)}`);
}

function nested(depth: number): Json {
  let v: Json = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

const DAMAGE: readonly Damage[] = [
  // the document
  { name: "not an object", damage: (b) => [b], message: /an array of 1, not a JSON object/ },
  { name: "no format", damage: (b) => ({ ...b, format: undefined }), path: "format", message: /missing: this is not a strata bundle/ },
  {
    name: "a format from the future",
    damage: (b) => ({ ...b, format: "strata-bundle@9" }),
    path: "format",
    message: /reads "strata-bundle@2"/,
  },
  { name: "an unknown field (snapshots)", damage: (b) => ({ ...b, snapshots: {} }), path: "snapshots", message: /not a field here/ },
  { name: "a __proto__ key", damage: (b) => inject(b, "{", '"__proto__":{"polluted":true},'), path: "__proto__", message: /not a field/ },
  // the session
  {
    name: "a session id that is not one",
    damage: edit((b) => {
      b.session.id = "x";
    }),
    path: "session.id",
    message: /session id/,
  },
  {
    name: "created 1e300",
    damage: edit((b) => {
      b.session.created = 1e300;
    }),
    path: "session.created",
    message: /got 1e\+300/,
  },
  {
    name: "a title that is a number",
    damage: edit((b) => {
      b.session.title = 42;
    }),
    path: "session.title",
    message: /expected a string/,
  },
  {
    name: "a huge title",
    damage: edit((b) => {
      b.session.title = "t".repeat(65_537);
    }),
    path: "session.title",
    message: /at most 65536/,
  },
  {
    name: "__proto__ in the metadata",
    damage: (b) => inject(b, '"metadata":{', '"__proto__":{"admin":true},'),
    path: "session.metadata.__proto__",
    message: /prototype/,
  },
  {
    name: "metadata nested 40 deep",
    damage: edit((b) => {
      b.session.metadata = nested(40);
    }),
    path: `session.metadata${".a".repeat(32)}`,
    message: /deeper than 32/,
  },
  {
    name: "metadata that is an array",
    damage: edit((b) => {
      b.session.metadata = [];
    }),
    path: "session.metadata",
    message: /JSON object/,
  },
  // events: types and ranges
  {
    name: "no events",
    damage: edit((b) => {
      b.events = [];
    }),
    path: "events",
    message: /has no events/,
  },
  {
    name: "events that are not an array",
    damage: edit((b) => {
      b.events = {};
    }),
    path: "events",
    message: /expected an array/,
  },
  {
    name: "an event that is a string",
    damage: edit((b) => {
      b.events[E] = "x";
    }),
    path: `events[${E}]`,
    message: /JSON object/,
  },
  {
    name: "ts 1e300",
    damage: edit((b) => {
      b.events[E].ts = 1e300;
    }),
    path: `events[${E}].ts`,
    message: /up to the year 9999/,
  },
  {
    name: "ts before 1970",
    damage: edit((b) => {
      b.events[E].ts = -1;
    }),
    path: `events[${E}].ts`,
    message: /got -1/,
  },
  {
    name: "ts with a fraction",
    damage: edit((b) => {
      b.events[E].ts = 1.5;
    }),
    path: `events[${E}].ts`,
    message: /whole milliseconds/,
  },
  {
    name: "ts as a date string",
    damage: edit((b) => {
      b.events[E].ts = "2024-01-01";
    }),
    path: `events[${E}].ts`,
    message: /got "2024/,
  },
  {
    name: "id 0",
    damage: edit((b) => {
      b.events[E].id = 0;
    }),
    path: `events[${E}].id`,
    message: /event id/,
  },
  {
    name: "id as a string",
    damage: edit((b) => {
      b.events[E].id = "7";
    }),
    path: `events[${E}].id`,
    message: /got "7"/,
  },
  {
    name: "id beyond 2^53",
    damage: edit((b) => {
      b.events[E].id = 2 ** 53;
    }),
    path: `events[${E}].id`,
    message: /event id/,
  },
  {
    name: "a depth field",
    damage: edit((b) => {
      b.events[E].depth = 3;
    }),
    path: `events[${E}].depth`,
    message: /not a field here/,
  },
  {
    name: "a label that is a number",
    damage: edit((b) => {
      b.events[E].label = 7;
    }),
    path: `events[${E}].label`,
    message: /string/,
  },
  {
    name: "a huge label",
    damage: edit((b) => {
      b.events[E].label = "l".repeat(1025);
    }),
    path: `events[${E}].label`,
    message: /at most 1024/,
  },
  {
    name: "a by that is an object",
    damage: edit((b) => {
      b.events[E].by = {};
    }),
    path: `events[${E}].by`,
    message: /string/,
  },
  {
    name: "a lone surrogate in a payload",
    damage: resigned((b) => {
      b.events[E].data = b.events[E].data.replace('"item ', '"\ud800item ');
    }),
    path: `events[${E}].data`,
    message: /lone UTF-16 surrogate at character \d+/,
  },
  {
    name: "data that is not a string",
    damage: edit((b) => {
      b.events[E].data = { ops: [] };
    }),
    path: `events[${E}].data`,
    message: /string/,
  },
  {
    name: "an unknown kind",
    damage: edit((b) => {
      b.events[E].kind = "patch@9";
    }),
    path: `events[${E}].kind`,
    message: /not an event kind/,
  },
  // events: history
  {
    name: "a duplicate id",
    damage: edit((b) => {
      b.events[E + 1].id = b.events[E].id;
    }),
    path: `events[${E + 1}].id`,
    message: new RegExp(`also the id of events\\[${E}\\]`),
  },
  {
    name: "a duplicated event",
    damage: edit((b) => {
      b.events.push(b.events[E]);
    }),
    path: (b) => `events[${b.events.length}].id`,
    message: /appears once/,
  },
  {
    name: "a prior that is not in the bundle",
    damage: edit((b) => {
      b.events[E].prior = 999_999;
    }),
    path: `events[${E}].prior`,
    message: /not the id/,
  },
  {
    name: "a prior that comes later",
    damage: edit((b) => {
      b.events[E].prior = b.events[E + 2].id;
    }),
    path: `events[${E}].prior`,
    message: /comes later/,
  },
  {
    name: "a prior that is the event itself",
    damage: edit((b) => {
      b.events[E].prior = b.events[E].id;
    }),
    path: `events[${E}].prior`,
    message: /itself/,
  },
  {
    name: "a cycle of priors",
    damage: edit((b) => {
      b.events[E].prior = b.events[E + 1].id;
      b.events[E + 1].prior = b.events[E].id;
    }),
    path: `events[${E}].prior`,
    message: /cannot form a cycle/,
  },
  {
    name: "a second genesis",
    damage: edit((b) => {
      b.events[E].kind = "genesis@1";
    }),
    path: `events[${E}].kind`,
    message: /only the first/,
  },
  {
    name: "a first event that is not a genesis",
    damage: edit((b) => {
      b.events.shift();
    }),
    path: "events[0].kind",
    message: /genesis/,
  },
  {
    name: "a patch with no prior",
    damage: edit((b) => {
      b.events[E].prior = null;
    }),
    path: `events[${E}].prior`,
    message: /only the first/,
  },
  {
    name: "an orphan event (no head reaches it)",
    damage: edit((b) => {
      b.events.push({ ...b.events[E], id: 999_999, prior: b.events[E - 1].id });
    }),
    path: (b) => `events[${b.events.length}]`,
    message: /on no branch's history/,
  },
  // events: payloads and replay
  {
    name: "data that is not JSON",
    damage: resigned((b) => {
      b.events[E].data = "{ops";
    }),
    path: `events[${E}].data`,
    message: /not JSON/,
  },
  {
    name: "an op of no known kind",
    damage: resigned((b) => {
      b.events[E].data = '{"ops":[["explode",1]]}';
    }),
    path: `events[${E}].data`,
    message: /explode/,
  },
  {
    name: "an op that does not apply",
    damage: resigned((b) => {
      b.events[E].data = '{"ops":[["rm",999999]]}';
    }),
    code: "replay-mismatch",
    path: `events[${E}].data`,
    message: /does not apply/,
  },
  // digests (strata-bundle@2)
  {
    name: "one event's data edited",
    damage: edit((b) => {
      b.events[E].data = b.events[E].data.replace('"item ', '"ITEM ');
    }),
    code: "digest-mismatch",
    path: `events[${E}].digest`,
    message: /does not match event \d+'s content and its prior's digest .*altered after export/,
  },
  {
    name: "one event's label edited",
    damage: edit((b) => {
      b.events[E].label = "edited";
    }),
    code: "digest-mismatch",
    path: `events[${E}].digest`,
    message: /does not match/,
  },
  {
    name: "one event's ts moved by 1 ms",
    damage: edit((b) => {
      b.events[E].ts += 1;
    }),
    code: "digest-mismatch",
    path: `events[${E}].digest`,
    message: /does not match/,
  },
  {
    name: "an edited event whose own digest was recomputed (the next event's digest breaks)",
    damage: edit((b) => {
      const e = b.events[E];
      e.label = "edited";
      e.digest = eventDigest(b.events.find((x: Json) => x.id === e.prior).digest, e);
    }),
    code: "digest-mismatch",
    path: (b) => `events[${b.events.findIndex((x) => x.prior === b.events[E]?.id)}].digest`,
    message: /does not match/,
  },
  {
    name: "every digest recomputed after an edit: the heads' XML still tells",
    damage: resigned((b) => {
      b.events[E].data = b.events[E].data.replace('"item ', '"ITEM ');
    }),
    code: "replay-mismatch",
    // the first head the replay reaches after the edited event
    path: (b) => {
      const order = new Map(b.events.map((e, i) => [e.id, i]));
      const first = [...b.branches].sort((x, y) => (order.get(x.head) as number) - (order.get(y.head) as number))[0]?.name as string;
      return /^[A-Za-z_$][\w$]*$/.test(first) ? `heads.${first}` : `heads[${JSON.stringify(first)}]`;
    },
    message: /differs from the replay of branch .*'s events/,
  },
  {
    name: "a digest that is not a sha256",
    damage: edit((b) => {
      b.events[E].digest = "abc";
    }),
    path: `events[${E}].digest`,
    message: /64 lowercase hex/,
  },
  {
    name: "strata-bundle@2 without digests",
    damage: edit((b) => {
      for (const e of b.events) delete e.digest;
    }),
    path: "events[0].digest",
    message: /missing/,
  },
  {
    name: "strata-bundle@1 with digests",
    damage: edit((b) => {
      b.format = BUNDLE_FORMAT_V1;
    }),
    path: "events[0].digest",
    message: /not a field here/,
  },
  // branches
  {
    name: "no branches",
    damage: edit((b) => {
      b.branches = [];
    }),
    path: "branches",
    message: /no branchs|has no branch/,
  },
  {
    name: "no main",
    damage: (b) => {
      b.branches[0].name = "primary";
      b.heads.primary = b.heads.main;
      delete b.heads.main;
      return b;
    },
    path: "branches",
    message: /no branch named "main"/,
  },
  {
    name: "two mains",
    damage: edit((b) => {
      b.branches[1].name = "main";
      delete b.heads["try-2"];
    }),
    path: "branches[1].name",
    message: /also the name of branches\[0\]/,
  },
  { name: "a branch name with a space", damage: (b) => renameBranch(b, "a b"), path: "branches[1].name", message: /not a branch name/ },
  { name: "a branch name with @", damage: (b) => renameBranch(b, "x@y"), path: "branches[1].name", message: /not a branch name/ },
  {
    name: "a 101-character branch name",
    damage: (b) => renameBranch(b, "b".repeat(101)),
    path: "branches[1].name",
    message: /at most 100/,
  },
  {
    name: "__proto__ as a head key",
    damage: (b) => inject(b, '"heads":{', '"__proto__":"<x/>",'),
    path: "heads.__proto__",
    message: /names no branch/,
  },
  {
    name: "__proto__ as a blob key",
    damage: (b) => inject(b, '"blobs":{', '"__proto__":"",'),
    path: "blobs.__proto__",
    message: /not a blob hash/,
  },
  {
    name: "a branch name carrying an OSC 52 clipboard write",
    damage: (b) => renameBranch(b, "\u001b]52;c;aGk=\u0007"),
    path: "branches[1].name",
    message: /\\u001b\]52;c;aGk=\\u0007/,
  },
  {
    name: "a head not in the bundle",
    damage: edit((b) => {
      b.branches[1].head = 999_999;
    }),
    path: "branches[1].head",
    message: /not the id of an event/,
  },
  {
    name: "an unknown origin",
    damage: edit((b) => {
      b.branches[1].origin = "sideways";
    }),
    path: "branches[1].origin",
    message: /genesis, fork, rewind/,
  },
  {
    name: "pinned as a string",
    damage: edit((b) => {
      b.branches[1].pinned = "yes";
    }),
    path: "branches[1].pinned",
    message: /true or false/,
  },
  // heads
  {
    name: "a branch without its head XML",
    damage: edit((b) => {
      delete b.heads["try-2"];
    }),
    path: 'heads["try-2"]',
    message: /missing/,
  },
  {
    name: "head XML for no branch",
    damage: edit((b) => {
      b.heads.nope = "<x/>";
    }),
    path: "heads.nope",
    message: /names no branch/,
  },
  {
    name: "head XML that is not a string",
    damage: edit((b) => {
      b.heads.main = 1;
    }),
    path: "heads.main",
    message: /expected a string/,
  },
  {
    name: "head XML that differs from the replay",
    damage: edit((b) => {
      b.heads["try-2"] = b.heads["try-2"].replace("on the fork", "changed");
    }),
    code: "replay-mismatch",
    path: 'heads["try-2"]',
    message: /differs from the replay of branch try-2's events at character \d+/,
  },
  // blobs
  {
    name: "blobs that are not an object",
    damage: edit((b) => {
      b.blobs = [];
    }),
    path: "blobs",
    message: /JSON object/,
  },
  {
    name: "a blob key that is not a hash",
    damage: edit((b) => {
      b.blobs.xyz = "";
    }),
    path: "blobs.xyz",
    message: /not a blob hash/,
  },
  {
    name: "a blob whose bytes do not hash to its key",
    damage: (b) => {
      const [h1, h2] = Object.keys(b.blobs) as [string, string];
      b.blobs[h1] = b.blobs[h2];
      return b;
    },
    path: (b) => {
      const key = Object.keys(b.blobs)[0] as string;
      return /^[a-f]/.test(key) ? `blobs.${key}` : `blobs["${key}"]`;
    },
    message: /hash to .*not to their key/,
  },
  {
    name: "a blob that is not canonical base64",
    damage: edit((b) => {
      b.blobs[Object.keys(b.blobs)[0] as string] = "!!!!";
    }),
    message: /not canonical base64/,
  },
  {
    name: "a blob the tree refers to, missing",
    damage: edit((b) => {
      delete b.blobs[Object.keys(b.blobs).find((h) => b.events[1].data.includes(h)) as string];
    }),
    path: "events[1].data",
    message: /refers to blob [0-9a-f]{64} \(EN-33\), which the bundle's blobs do not carry/,
  },
  {
    name: "a blob a `set` op names (a changed template), missing",
    damage: edit((b) => {
      const update = b.events.find((e: Json) => e.label === "inputs.update");
      delete b.blobs[/"hash","([0-9a-f]{64})"/.exec(update.data)?.[1] as string];
    }),
    path: (b) => `events[${b.events.findIndex((e) => e.label === "inputs.update")}].data`,
    message: /refers to blob [0-9a-f]{64} \(EN-33\)/,
  },
  {
    name: "the blob a request record's system attribute names, missing",
    damage: edit((b) => {
      const turn = b.events.find((e: Json) => e.label === "turn.start");
      delete b.blobs[/"system":"([0-9a-f]{64})"/.exec(turn.data)?.[1] as string];
    }),
    path: (b) => `events[${b.events.findIndex((e) => e.label === "turn.start")}].data`,
    message: /refers to blob [0-9a-f]{64} \(EN-33\)/,
  },
  // sizes
  { name: "more events than the limit", damage: (b) => b, limits: { events: 10 }, path: "events", message: /at most 10/ },
  { name: "more branches than the limit", damage: (b) => b, limits: { branches: 2 }, path: "branches", message: /at most 2/ },
  { name: "more blobs than the limit", damage: (b) => b, limits: { blobs: 3 }, path: "blobs", message: /at most 3/ },
  { name: "a payload over the limit", damage: (b) => b, limits: { dataChars: 10 }, path: "events[0].data", message: /at most 10/ },
  { name: "a blob over the limit", damage: (b) => b, limits: { blobBytes: 8 }, message: /more than 8 bytes/ },
];

function renameBranch(b: Json, name: string): Json {
  b.heads[name] = b.heads[b.branches[1].name];
  delete b.heads[b.branches[1].name];
  b.branches[1].name = name;
  return b;
}

describe("EN-32 a damaged or hostile bundle is refused, naming where, and the database stays byte-for-byte as it was", () => {
  let path: string;
  beforeAll(() => {
    const f = fileStore("target.db");
    richSession(f.store);
    f.store.close();
    path = f.path;
  });

  it.each(DAMAGE.map((d) => [d.name, d] as const))("%s", (_, d) => {
    const before = sha(path);
    const store = openStore(path);
    let error: unknown;
    try {
      importBundle(store, d.damage(copy()), d.limits === undefined ? {} : { limits: d.limits });
    } catch (e) {
      error = e;
    }
    try {
      expect(error).toBeInstanceOf(BundleError);
      const e = error as BundleError;
      expect(e.code).toBe(d.code ?? "bad-bundle");
      if (d.path !== undefined) expect(e.path).toBe(typeof d.path === "function" ? d.path(pristine) : d.path);
      expect(e.message).toMatch(d.message);
      expect(e.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(store.listSessions()).toHaveLength(1);
      expect(verifyStore(store).ok).toBe(true);
    } finally {
      store.close();
    }
    expect(sha(path)).toBe(before);
  });

  it("a head naming an event of another session in the importing database is refused (ids are the bundle's own)", () => {
    const { store } = fileStore();
    const other = Session.create(store);
    for (let i = 0; i < 300; i++) other.commit([["ins", nodeId(3), null, { tag: "x" }]]);
    const b = copy();
    b.branches[1].head = other.head.id;
    expect(b.events.some((e: Json) => e.id === other.head.id)).toBe(false);
    expect(() => importBundle(store, b)).toThrow(expect.objectContaining({ path: "branches[1].head" }));
    expect(store.listSessions()).toHaveLength(1);
  });
});
