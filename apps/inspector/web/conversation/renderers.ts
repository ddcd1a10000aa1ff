/**
 * The conversation view's renderers (IN-26): one per element of the agent's vocabulary (the
 * compiler checks the table against `TAG`, so a tag the loop gains without a renderer does not
 * build), and the generic one every other element falls back to. Statuses that mean something
 * went wrong or did not happen — a call interrupted, not executed, failed with an exception, in
 * an environment error or cancelled; a turn failed or cut off; a run stopped early — carry a
 * visible mark. Values from the session are text, and pick a CSS class only through the tables
 * here (never as a class name themselves).
 */
import type { ATTR, CallStatus, StopReason, TAG, TurnStatus } from "@strata/agent";
import { html, nothing, type TemplateResult } from "lit";
import type { NodeJson } from "../../src/protocol.ts";
import { sessionHash } from "../route.ts";
import { visible } from "../text.ts";
import { Registry, type RenderContext, type Renderer } from "./registry.ts";
import "./call-files.ts";

type Tag = (typeof TAG)[keyof typeof TAG];
type Attr = (typeof ATTR)[keyof typeof ATTR];

/** Attribute `name` of `n` (own attributes only: a name is session data). */
function own(n: NodeJson, name: string): string | undefined {
  return Object.hasOwn(n.attrs, name) ? n.attrs[name] : undefined;
}

/** Attribute `name` of the agent's vocabulary. */
function attr(n: NodeJson, name: Attr): string | undefined {
  return own(n, name);
}

/** How a status is marked: its words, and a class from this closed set. */
interface Mark {
  readonly label: string;
  readonly cls: "ok" | "busy" | "warn" | "bad";
}

/** Looks `value` up in `table` (own keys only); an unknown value is shown as itself, marked as a warning. */
function markOf<K extends string>(table: Readonly<Record<K, Mark>>, value: string): Mark {
  return Object.hasOwn(table, value) ? table[value as K] : { label: value, cls: "warn" };
}

const CALL_MARK: Readonly<Record<CallStatus, Mark>> = {
  arguments: { label: "streaming arguments", cls: "busy" },
  pending: { label: "pending", cls: "busy" },
  running: { label: "running", cls: "busy" },
  executed: { label: "executed", cls: "ok" },
  not_executed: { label: "not executed", cls: "warn" },
  env_error: { label: "environment error", cls: "bad" },
  interrupted: { label: "interrupted", cls: "bad" },
};

const TURN_MARK: Readonly<Record<TurnStatus, Mark>> = {
  streaming: { label: "streaming", cls: "busy" },
  complete: { label: "complete", cls: "ok" },
  failed: { label: "failed", cls: "bad" },
  interrupted: { label: "interrupted", cls: "bad" },
};

const STOP_MARK: Readonly<Record<StopReason, Mark>> = {
  "completed-by-tool": { label: "completed (by the agent's tool)", cls: "ok" },
  "env-completed": { label: "completed (reported by the environment)", cls: "ok" },
  "end-turn": { label: "waiting for the user", cls: "ok" },
  "max-steps": { label: "stopped: max steps", cls: "warn" },
  budget: { label: "stopped: budget", cls: "warn" },
  "context-overflow": { label: "stopped: context overflow", cls: "bad" },
  cancelled: { label: "cancelled", cls: "bad" },
  "model-error": { label: "stopped: model error", cls: "bad" },
  "prompt-error": { label: "stopped: prompt error", cls: "bad" },
};

function badge(m: Mark | undefined, test = "mark"): TemplateResult | typeof nothing {
  return m === undefined ? nothing : html`<span class="badge ${m.cls}" data-test=${test}>${m.label}</span>`;
}

/** `<tag a="v" …>` of any element, as text. */
function opening(n: NodeJson): TemplateResult {
  return html`<span class="tag">&lt;${visible(n.tag)}</span>${Object.entries(n.attrs).map(
    ([k, v]) => html` <span class="an">${visible(k)}</span>=<span class="av">"${visible(v.length > 80 ? `${v.slice(0, 80)}…` : v)}"</span>`,
  )}<span class="tag">&gt;</span>`;
}

/** Anything without a renderer of its own: shown whole, its children by their own renderers. */
export const generic: Renderer = (n, ctx) =>
  html`<div class="c-generic" data-test="generic" data-tag=${n.tag} data-id=${n.id}>
    <div class="c-head">${opening(n)} ${ctx.ref(n)}</div>
    ${n.text !== undefined && n.text !== "" ? html`<div class="c-text">${ctx.text(n)}</div>` : nothing}
    ${ctx.children(n)}
  </div>`;

const turn: Renderer = (n, ctx) => {
  const role = attr(n, "role") ?? "";
  const status = attr(n, "status");
  const kind = role === "user" ? "user" : role === "assistant" ? "assistant" : "other";
  const model = attr(n, "model");
  const finish = attr(n, "finish");
  return html`<article class="c-turn ${kind}" data-test="turn" data-id=${n.id} data-role=${role} data-status=${status ?? ""}>
    <div class="c-head"><span class="who">${role === "" ? "turn" : visible(role)}</span>
      ${model === undefined ? nothing : html`<span class="dim">${visible(model)}</span>`}
      ${status === undefined || status === "complete" ? nothing : badge(markOf(TURN_MARK, status))}
      ${finish === undefined ? nothing : html`<span class="badge warn">finish: ${visible(finish)}</span>`}
      ${ctx.ref(n)}</div>
    ${n.text !== undefined && n.text !== "" ? html`<div class="c-text">${ctx.text(n)}</div>` : nothing}
    ${ctx.children(n)}
  </article>`;
};

const text: Renderer = (n, ctx) => html`<div class="c-msg" data-test="message" data-id=${n.id}>${ctx.text(n)}</div>`;

const reasoning: Renderer = (n, ctx) =>
  html`<details class="c-reasoning" data-test="reasoning" data-id=${n.id}><summary class="dim">reasoning (${n.textLength ?? n.text?.length ?? 0} characters)</summary><div class="c-text">${ctx.text(n)}</div></details>`;

const request: Renderer = (n, ctx) => {
  // PR-15's record: a digest of the request this turn answered (the prompt tab shows the request itself).
  const hash = own(n, "hash") ?? "";
  return html`<div class="c-request dim" data-test="request">request ${visible(hash.slice(0, 12))}… · ${visible(own(n, "count") ?? "?")} messages ${ctx.ref(n)}</div>`;
};

const usage: Renderer = (n) =>
  html`<div class="c-usage dim" data-test="usage">tokens: ${Object.entries(n.attrs)
    .map(([k, v]) => `${visible(v)} ${visible(k)}`)
    .join(", ")}</div>`;

/** JSON arguments pretty-printed when whole and valid; otherwise as they streamed. */
const args: Renderer = (n, ctx) => {
  let pretty: string | undefined;
  if (n.textLength === undefined && n.text !== undefined)
    try {
      pretty = JSON.stringify(JSON.parse(n.text), null, 2);
    } catch {
      pretty = undefined; // not JSON (yet, or ever): shown as it is
    }
  return html`<div class="c-part"><div class="c-label">arguments</div><pre class="c-args" data-test="args">${pretty === undefined ? ctx.text(n) : visible(pretty)}</pre></div>`;
};

const output: Renderer = (n, ctx) =>
  html`<div class="c-part"><div class="c-label">output</div><pre class="c-output" data-test="output" data-id=${n.id}>${ctx.text(n)}</pre></div>`;

const result: Renderer = (n, ctx) =>
  html`<div class="c-part"><div class="c-label">result${attr(n, "synthetic") === "true" ? html` <span class="badge warn" data-test="synthetic">synthetic</span>` : nothing}</div><pre class="c-result" data-test="result">${ctx.text(n)}</pre></div>`;

const diag: Renderer = (n, ctx) =>
  html`<div class="c-diag" data-test="diag" data-kind=${attr(n, "kind") ?? ""}>⚠ ${visible(attr(n, "kind") ?? "diag")}${Object.entries(
    n.attrs,
  )
    .filter(([k]) => k !== "kind")
    .map(
      ([k, v]) => html` <span class="dim">${visible(k)}=${visible(v)}</span>`,
    )}${n.text !== undefined && n.text !== "" ? html`: ${ctx.text(n)}` : nothing}</div>`;

/** What a call's marks say: its status, and an exception, a cancel, a retry on top of it. */
function callMarks(n: NodeJson): TemplateResult[] {
  const status = attr(n, "status") ?? "";
  const error = attr(n, "error");
  const out: TemplateResult[] = [];
  if (status === "executed" && error !== undefined)
    out.push(html`<span class="badge bad" data-test="mark">failed: ${visible(error)}</span>`);
  else out.push(html`${badge(markOf(CALL_MARK, status))}`);
  if ((n.children ?? []).some((c) => !("elided" in c) && c.tag === "diag" && c.attrs.kind === "cancelled"))
    out.push(html`<span class="badge bad" data-test="mark">cancelled</span>`);
  const attempt = Number(attr(n, "attempt") ?? 1);
  if (attempt > 1) out.push(html`<span class="badge warn">attempt ${attempt}</span>`);
  return out;
}

/**
 * A call that ran on a branch of its own (an imported sub-agent run, IM-24: `branch="agent-…"`)
 * links to that branch's conversation.
 */
function branchLink(n: NodeJson, ctx: RenderContext): TemplateResult | typeof nothing {
  const branch = own(n, "branch");
  if (branch === undefined || branch === ctx.branch) return nothing;
  return html`<a class="c-branch" data-test="call-branch" href=${sessionHash(ctx.session, branch, undefined, "conversation")}>↳ ${visible(branch)}</a>`;
}

const call: Renderer = (n, ctx) => {
  const status = attr(n, "status") ?? "";
  const reason = attr(n, "reason");
  const fx = Object.hasOwn(ctx.calls, String(n.id)) ? ctx.calls[String(n.id)] : undefined;
  return html`<section class="c-call" data-test="call" data-id=${n.id} data-tool=${attr(n, "tool") ?? ""} data-status=${status}>
    <div class="c-head"><span class="tool">${visible(attr(n, "tool") ?? "?")}</span> ${callMarks(n)}
      ${attr(n, "replay") === undefined ? nothing : html`<span class="dim">replay ${visible(attr(n, "replay") ?? "")}</span>`}
      ${fx === undefined ? nothing : html`<span class="dim">settled at ${ctx.eventLink(fx.settled)}</span>`}
      ${branchLink(n, ctx)}
      ${ctx.ref(n)}</div>
    ${reason === undefined ? nothing : html`<div class="c-reason" data-test="reason">${visible(reason)}</div>`}
    ${ctx.children(n)}
    ${fx?.files === undefined ? nothing : html`<strata-call-files .session=${ctx.session} .branch=${ctx.branch} .from=${fx.files.from} .to=${fx.files.to}></strata-call-files>`}
  </section>`;
};

const stop: Renderer = (n, ctx) => {
  const reason = attr(n, "reason") ?? "";
  const counts = (["steps", "effective", "calls", "tokens"] as const)
    .filter((k) => attr(n, k) !== undefined)
    .map((k) => `${attr(n, k)} ${k}`)
    .join(" · ");
  const detail = attr(n, "detail");
  return html`<div class="c-stop" data-test="stop" data-reason=${reason}>run ${badge(markOf(STOP_MARK, reason))} <span class="dim">${visible(counts)}</span>
    ${detail === undefined ? nothing : html`<span class="dim">— ${visible(detail)}</span>`} ${ctx.ref(n)}</div>`;
};

/** Every tag of the agent's vocabulary has its renderer here (a new tag does not compile without one). */
export const AGENT_RENDERERS = {
  turn,
  text,
  reasoning,
  request,
  usage,
  call,
  args,
  output,
  result,
  diag,
  stop,
} satisfies Record<Tag, Renderer>;

/** The registry the conversation view renders with. */
export const REGISTRY: Registry = new Registry(generic).registerAll(AGENT_RENDERERS);

export type { RenderContext };
