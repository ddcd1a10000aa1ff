/**
 * The inspector web app (IN-10 … IN-16): a session list, and per session a branch graph, a
 * scrubbable timeline of events (virtualized), the tree at the selected event with selector
 * search, a diff between two events, the prompt at the event, and live following of a running
 * session. Every piece of session content goes through Lit text bindings (escaped); nothing is
 * ever inserted as HTML.
 */
import { html, LitElement, noChange, nothing, svg, type TemplateResult } from "lit";
import { Directive, directive, type ElementPart } from "lit/directive.js";
import {
  api,
  apiUrl,
  type Branch,
  type Elided,
  type EventRow,
  type NodeJson,
  type Request,
  type SessionInfo,
  type SessionRow,
  type Spec,
  type TreeDiff,
  time,
  visible,
} from "./api.ts";

const ROW = 22;
const PAGE = 500;

/**
 * Sets style properties through the CSSOM. The CSP forbids inline `style` attributes (and so
 * Lit's styleMap, which writes one on first render); `element.style` is allowed.
 */
class CssDirective extends Directive {
  override update(part: ElementPart, [props]: [Record<string, string>]): typeof noChange {
    const style = (part.element as HTMLElement).style;
    for (const [k, v] of Object.entries(props)) style.setProperty(k, v);
    return noChange;
  }
  override render(_props: Record<string, string>): typeof noChange {
    return noChange;
  }
}
const css = directive(CssDirective);

/** Light DOM everywhere: one stylesheet (styles.css), no inline styles (the CSP forbids them). */
class Base extends LitElement {
  override createRenderRoot(): HTMLElement {
    return this;
  }
}

function route(): { session?: string; branch?: string; at?: number } {
  const m = /^#\/s\/([^/?]+)(?:\?(.*))?$/.exec(location.hash);
  if (m === null) return {};
  const q = new URLSearchParams(m[2] ?? "");
  const at = q.get("at");
  return { session: decodeURIComponent(m[1] as string), branch: q.get("branch") ?? "main", ...(at !== null ? { at: Number(at) } : {}) };
}

class StrataApp extends Base {
  static override properties = { r: { state: true } };
  r = route();
  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener("hashchange", () => {
      const next = route();
      if (next.session !== this.r.session || next.branch !== this.r.branch) this.r = next;
    });
  }
  override render(): TemplateResult {
    if (this.r.session === undefined) return html`<strata-sessions></strata-sessions>`;
    return html`<strata-session .session=${this.r.session} .branch=${this.r.branch ?? "main"} .initialAt=${this.r.at}></strata-session>`;
  }
}

class SessionList extends Base {
  static override properties = { rows: { state: true }, error: { state: true } };
  rows: SessionRow[] | undefined;
  error = "";
  override async connectedCallback(): Promise<void> {
    super.connectedCallback();
    try {
      this.rows = (await api<{ sessions: SessionRow[] }>("sessions")).sessions;
    } catch (e) {
      this.error = (e as Error).message;
    }
  }
  override render(): TemplateResult {
    const link = (id: string) => `#/s/${encodeURIComponent(id)}${location.search}`;
    return html`<header class="top"><h1>strata inspector</h1><span class="dim">sessions</span></header>
      ${this.error ? html`<div class="err">${this.error}</div>` : nothing}
      ${
        this.rows === undefined
          ? html`<p class="dim">loading…</p>`
          : this.rows.length === 0
            ? html`<p class="dim">no sessions in this database yet — <code>strata run</code> starts one</p>`
            : html`<table class="sessions" data-test="sessions">
              <tr><th>session</th><th>title</th><th>branches</th><th>events</th><th>last activity</th><th>last</th></tr>
              ${this.rows.map(
                (s) =>
                  html`<tr><td><a href=${link(s.id)} data-session=${s.id}>${s.id}</a></td><td>${visible(s.title ?? "")}</td><td>${s.branches}</td><td>${s.events}</td><td>${time(s.lastActivity)}</td><td class="dim">${s.lastLabel ?? ""}</td></tr>`,
              )}
            </table>`
      }`;
  }
}

type Tab = "tree" | "diff" | "prompt" | "event";

class SessionView extends Base {
  static override properties = {
    session: {},
    branch: {},
    initialAt: {},
    info: { state: true },
    total: { state: true },
    head: { state: true },
    index: { state: true },
    base: { state: true },
    tab: { state: true },
    tree: { state: true },
    hits: { state: true },
    diff: { state: true },
    prompt: { state: true },
    detail: { state: true },
    error: { state: true },
    following: { state: true },
    live: { state: true },
    listTop: { state: true },
    height: { state: true },
  };
  session = "";
  branch = "main";
  initialAt: number | undefined;
  info: SessionInfo | undefined;
  total = 0;
  head = 0;
  /** Selected row (0-based depth index) and the diff base row. */
  index = -1;
  base: number | undefined;
  tab: Tab = "tree";
  tree: { event: number; root: NodeJson; size: number } | undefined;
  hits = new Set<number>();
  diff: { from: number; to: number; diff: TreeDiff } | undefined;
  prompt: { event: number; request: Request } | undefined;
  detail: unknown;
  error = "";
  following = true;
  live: "connecting" | "live" | "off" = "off";
  listTop = 0;
  height = 600;
  readonly #pages = new Map<number, EventRow[] | Promise<void>>();
  #source: EventSource | undefined;
  #liveQueue: Promise<void> = Promise.resolve();
  #treeTimer: ReturnType<typeof setTimeout> | undefined;
  #expanded = new Map<number, boolean>();
  #parents = new Map<number, number>();

  override async connectedCallback(): Promise<void> {
    super.connectedCallback();
    await this.#load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#source?.close();
  }

  async #load(): Promise<void> {
    try {
      this.info = await api<SessionInfo>(`sessions/${encodeURIComponent(this.session)}`);
      const first = await api<{ total: number; head: number; events: EventRow[] }>(`sessions/${encodeURIComponent(this.session)}/events`, {
        branch: this.branch,
        offset: 0,
        limit: PAGE,
      });
      this.#pages.clear();
      this.#pages.set(0, first.events);
      this.total = first.total;
      this.head = first.head;
      let idx = this.total - 1;
      if (this.initialAt !== undefined) {
        const hit = first.events.find((e) => e.id === this.initialAt);
        if (hit !== undefined) idx = hit.depth - 1;
      }
      await this.#select(idx);
      this.#connect();
      // start with the selected row in view
      requestAnimationFrame(() => {
        const list = this.querySelector<HTMLElement>(".events");
        if (list !== null) {
          this.height = list.clientHeight;
          list.scrollTop = Math.max(0, this.index * ROW - list.clientHeight / 2);
        }
      });
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  /** The live stream (IN-13): new events extend the timeline; following keeps the tree at the head. */
  #connect(): void {
    this.#source?.close();
    this.live = "connecting";
    const src = new EventSource(apiUrl(`sessions/${encodeURIComponent(this.session)}/stream`, { branch: this.branch, from: this.head }));
    this.#source = src;
    src.addEventListener("open", () => {
      this.live = "live";
    });
    src.addEventListener("error", () => {
      this.live = src.readyState === EventSource.CLOSED ? "off" : "connecting";
    });
    // Frames are handled one after another: a reset's fetch finishes before the events after it count.
    const inOrder = (handle: (e: MessageEvent) => void | Promise<void>) => (e: Event) => {
      this.#liveQueue = this.#liveQueue
        .then(() => handle(e as MessageEvent))
        .catch((err: Error) => {
          this.error = err.message;
        });
    };
    src.addEventListener(
      "patch@1",
      inOrder((e) => {
        const id = Number(e.lastEventId);
        this.total += 1;
        this.head = id;
        // the last page is stale now; it is fetched again when shown
        this.#pages.delete(Math.floor((this.total - 1) / PAGE));
        if (this.following) this.#select(this.total - 1, true);
        else this.requestUpdate();
      }),
    );
    // The stream's last frame (IN-18): the branch is gone, or the server cannot go on. Stop here
    // rather than reconnect into the same answer; the message says what happened.
    const ended = (e: Event): void => {
      let message = "the live stream ended";
      try {
        message = String((JSON.parse((e as MessageEvent).data) as { message?: unknown }).message ?? message);
      } catch {
        // keep the generic message
      }
      src.close();
      this.live = "off";
      this.error = `live stream stopped: ${message}`;
    };
    src.addEventListener("gone@1", ended);
    src.addEventListener("error@1", ended);
    // A reset carries the new line's full snapshot (for replicas); this view fetches its own windowed tree.
    src.addEventListener(
      "reset@1",
      inOrder(async (e) => {
        const at = Number(e.lastEventId);
        const event = await api<EventRow>(`sessions/${encodeURIComponent(this.session)}/event/${at}`);
        // A rewind keeps the abandoned head as a branch of its own: the graph shows it.
        this.info = await api<SessionInfo>(`sessions/${encodeURIComponent(this.session)}`);
        this.#pages.clear();
        this.total = event.depth;
        this.head = at;
        await this.#select(this.total - 1);
      }),
    );
  }

  #page(p: number): EventRow[] | undefined {
    const hit = this.#pages.get(p);
    if (Array.isArray(hit)) return hit;
    if (hit === undefined) {
      const loading = api<{ events: EventRow[] }>(`sessions/${encodeURIComponent(this.session)}/events`, {
        branch: this.branch,
        offset: p * PAGE,
        limit: PAGE,
      })
        .then((r) => {
          this.#pages.set(p, r.events);
          this.requestUpdate();
        })
        .catch((e: Error) => {
          this.#pages.delete(p);
          this.error = e.message;
        });
      this.#pages.set(p, loading);
    }
    return undefined;
  }

  #row(i: number): EventRow | undefined {
    return this.#page(Math.floor(i / PAGE))?.[i % PAGE];
  }

  async #rowAsync(i: number): Promise<EventRow | undefined> {
    const p = Math.floor(i / PAGE);
    for (let tries = 0; tries < 50; tries++) {
      const row = this.#row(i);
      if (row !== undefined) return row;
      await (this.#pages.get(p) as Promise<void> | undefined);
    }
    return undefined;
  }

  /** Selects row `i` (scrubbing, a click, arrow keys, or following). */
  async #select(i: number, follow = false): Promise<void> {
    if (this.total === 0) return;
    const index = Math.max(0, Math.min(this.total - 1, i));
    this.index = index;
    if (!follow) this.following = index === this.total - 1;
    const row = await this.#rowAsync(index);
    if (row === undefined || this.index !== index) return;
    history.replaceState(null, "", `#/s/${encodeURIComponent(this.session)}?branch=${encodeURIComponent(this.branch)}&at=${row.id}`);
    clearTimeout(this.#treeTimer);
    this.#treeTimer = setTimeout(() => void this.#refresh(row.id), follow ? 150 : 40);
  }

  async #refresh(at: number): Promise<void> {
    try {
      const s = encodeURIComponent(this.session);
      if (this.tab === "tree" || this.tree === undefined) {
        const t = await api<{ event: number; root: NodeJson; size: number }>(`sessions/${s}/tree`, { branch: this.branch, at });
        this.#parents = new Map();
        const walk = (n: NodeJson) => {
          for (const c of n.children ?? []) {
            if ("elided" in c) continue;
            this.#parents.set(c.id, n.id);
            walk(c);
          }
        };
        walk(t.root);
        this.tree = t;
        await this.#search();
      }
      if (this.tab === "diff" && this.base !== undefined) {
        const from = (await this.#rowAsync(this.base))?.id;
        if (from !== undefined) this.diff = await api(`sessions/${s}/diff`, { branch: this.branch, from, to: at });
      }
      if (this.tab === "prompt") this.prompt = await api(`sessions/${s}/prompt`, { branch: this.branch, at });
      if (this.tab === "event") this.detail = await api(`sessions/${s}/event/${at}`);
      this.error = "";
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  #query = "";
  async #search(): Promise<void> {
    if (this.#query.trim() === "" || this.tree === undefined) {
      this.hits = new Set();
      return;
    }
    try {
      const r = await api<{ matches: number[] }>(`sessions/${encodeURIComponent(this.session)}/tree`, {
        branch: this.branch,
        at: this.tree.event,
        select: this.#query,
      });
      this.hits = new Set(r.matches);
      for (const id of r.matches)
        for (let p = this.#parents.get(id); p !== undefined; p = this.#parents.get(p)) this.#expanded.set(p, true);
      this.error = "";
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  #onKey(e: KeyboardEvent): void {
    const step =
      e.key === "ArrowDown" || e.key === "ArrowRight"
        ? 1
        : e.key === "ArrowUp" || e.key === "ArrowLeft"
          ? -1
          : e.key === "PageDown"
            ? 20
            : e.key === "PageUp"
              ? -20
              : 0;
    if (step === 0) {
      if (e.key === "End") void this.#select(this.total - 1);
      else if (e.key === "Home") void this.#select(0);
      return;
    }
    e.preventDefault();
    void this.#select(this.index + step);
    const list = this.querySelector<HTMLElement>(".events");
    if (list !== null) {
      const y = (this.index + step) * ROW;
      if (y < list.scrollTop) list.scrollTop = y;
      else if (y + ROW > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW - list.clientHeight;
    }
  }

  #setTab(t: Tab): void {
    this.tab = t;
    const row = this.#row(this.index);
    if (row !== undefined) void this.#refresh(row.id);
  }

  override render(): TemplateResult {
    if (this.error !== "" && this.info === undefined)
      return html`<header class="top"><a href="#/${location.search}">← sessions</a></header><div class="err">${this.error}</div>`;
    if (this.info === undefined) return html`<p class="dim">loading…</p>`;
    const selected = this.#row(this.index);
    return html`<header class="top">
        <a href="#/${location.search}">← sessions</a>
        <h1>${visible(this.info.title ?? this.info.id)}</h1>
        <span class="dim">${this.info.id}</span>
        <label>branch
          <select data-test="branch" @change=${(e: Event) => (location.hash = `#/s/${encodeURIComponent(this.session)}?branch=${encodeURIComponent((e.target as HTMLSelectElement).value)}`)}>
            ${this.info.branches.map((b) => html`<option value=${b.name} ?selected=${b.name === this.branch}>${visible(b.name)}</option>`)}
          </select>
        </label>
        <span data-test="live" class=${this.following ? "live" : "paused"}>${this.live === "live" ? (this.following ? "● live, following" : "❚❚ paused (scrubbed back)") : this.live}</span>
        ${this.following ? nothing : html`<button data-test="follow" @click=${() => void this.#select(this.total - 1)}>follow</button>`}
      </header>
      <div class="layout">
        <div class="left">
          ${this.#graph()}
          <div class="scrub">
            <input type="range" data-test="scrubber" min="0" max=${Math.max(0, this.total - 1)} .value=${String(this.index)} @input=${(e: Event) => void this.#select(Number((e.target as HTMLInputElement).value))} @keydown=${(e: KeyboardEvent) => e.stopPropagation()} />
            <span data-test="position">${this.index + 1} / ${this.total}</span>
          </div>
          <div class="events" tabindex="0" data-test="events" @keydown=${(e: KeyboardEvent) => this.#onKey(e)} @scroll=${(e: Event) => {
            this.listTop = (e.target as HTMLElement).scrollTop;
            this.height = (e.target as HTMLElement).clientHeight;
          }}>
            ${this.#rows()}
          </div>
        </div>
        <div class="right">
          <div class="tabs">
            ${(["tree", "diff", "prompt", "event"] as Tab[]).map((t) => html`<button data-tab=${t} class=${this.tab === t ? "on" : ""} @click=${() => this.#setTab(t)}>${t}</button>`)}
            <span class="dim">event ${selected?.id ?? "…"} ${visible(selected?.label ?? "")} ${selected ? time(selected.ts) : ""}</span>
            ${
              this.tab === "tree"
                ? html`<input data-test="select" placeholder="CSS selector, e.g. call[status=running]" size="36" @change=${(e: Event) => {
                    this.#query = (e.target as HTMLInputElement).value;
                    void this.#search();
                  }} /> <span class="dim" data-test="hits">${this.#query ? `${this.hits.size} matches` : ""}</span>`
                : nothing
            }
            ${this.tab === "diff" ? html`<span class="dim">${this.base === undefined ? "shift-click an event to diff against it" : `from row ${this.base + 1}`}</span>` : nothing}
          </div>
          ${this.error ? html`<div class="err" data-test="error">${this.error}</div>` : nothing}
          <div class="pane" data-test="pane">${this.#pane()}</div>
        </div>
      </div>`;
  }

  #rows(): TemplateResult {
    const first = Math.max(0, Math.floor(this.listTop / ROW) - 5);
    const last = Math.min(this.total, first + Math.ceil(this.height / ROW) + 12);
    const rows: TemplateResult[] = [];
    for (let i = first; i < last; i++) {
      const e = this.#row(i);
      const cls = `row${i === this.index ? " sel" : ""}${i === this.base ? " base" : ""}`;
      rows.push(
        html`<div class=${cls} data-row=${i} data-event=${e?.id ?? ""} ${css({ top: `${i * ROW}px` })} @click=${(ev: MouseEvent) => {
          if (ev.shiftKey) {
            this.base = i;
            this.#setTab("diff");
          } else void this.#select(i);
        }}><span class="id">${e?.id ?? "…"}</span>${visible(e?.label ?? e?.kind ?? "")} <span class="dim">${e?.by ? `by ${visible(e.by)}` : ""}</span></div>`,
      );
    }
    return html`<div ${css({ height: `${this.total * ROW}px`, position: "relative" })}>${rows}</div>`;
  }

  /** Branches as lanes over event depth; forks start at their fork point, kept rewound heads are dim. */
  #graph(): TemplateResult {
    const branches = this.info?.branches ?? [];
    const max = Math.max(1, ...branches.map((b) => b.events));
    const w = 400;
    const x = (d: number) => 8 + (d / max) * (w - 16);
    return html`<div class="graph" data-test="graph"><svg viewBox="0 0 ${w} ${branches.length * 18 + 4}" role="img" aria-label="branches">
      ${branches.map((b: Branch, k) => {
        const y = 12 + k * 18;
        const from = b.originDepth ?? 1;
        return svg`<g class="lane ${b.name === this.branch ? "sel" : ""}" @click=${() => (location.hash = `#/s/${encodeURIComponent(this.session)}?branch=${encodeURIComponent(b.name)}`)}>
          <title>${b.name}: ${b.origin}${b.originEvent !== null ? ` at event ${b.originEvent}` : ""}, head ${b.head} (${b.events} events)</title>
          <line x1=${x(from)} x2=${x(b.events)} y1=${y} y2=${y} stroke=${b.name === this.branch ? "#5fb3ff" : b.origin === "rewind" ? "#444c56" : "#7d8794"} stroke-width="3" stroke-dasharray=${b.origin === "rewind" ? "4 3" : "none"}></line>
          ${b.originDepth !== null ? svg`<circle cx=${x(from)} cy=${y} r="3" fill="#d29922"></circle>` : nothing}
          <text x=${x(from) + 4} y=${y - 4}>${visible(b.name)}</text>
        </g>`;
      })}
    </svg></div>`;
  }

  #pane(): TemplateResult | typeof nothing {
    if (this.tab === "tree")
      return this.tree === undefined
        ? html`<p class="dim">loading…</p>`
        : html`<div class="tree" data-test="tree" data-at=${this.tree.event}>${this.#node(this.tree.root, 0)}</div>`;
    if (this.tab === "diff") return this.#diffView();
    if (this.tab === "prompt") return this.#promptView();
    return html`<pre class="msg" data-test="event-detail">${this.detail === undefined ? "" : visible(JSON.stringify(this.detail, null, 2))}</pre>`;
  }

  /** Loads a skipped run of `parent`'s children (IN-15: the tree arrives windowed). */
  async #more(parent: NodeJson, gap: Elided): Promise<void> {
    if (this.tree === undefined) return;
    const { after, before } = gap.elided;
    try {
      const r = await api<{ children: NodeJson[]; more: boolean }>(`sessions/${encodeURIComponent(this.session)}/children`, {
        branch: this.branch,
        at: this.tree.event,
        id: parent.id,
        after,
        before,
        limit: 500,
      });
      const list = parent.children ?? [];
      const at = list.indexOf(gap);
      const last = r.children[r.children.length - 1];
      const rest: Elided[] = r.more && last !== undefined ? [{ elided: { after: last.id, before } }] : [];
      list.splice(at, 1, ...r.children, ...rest);
      for (const c of r.children) this.#parents.set(c.id, parent.id);
      this.requestUpdate();
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  async #fullText(n: NodeJson): Promise<void> {
    if (this.tree === undefined) return;
    const r = await api<{ text: string }>(`sessions/${encodeURIComponent(this.session)}/text`, {
      branch: this.branch,
      at: this.tree.event,
      id: n.id,
    });
    n.text = r.text;
    delete n.textLength;
    this.requestUpdate();
  }

  #node(n: NodeJson, depth: number): TemplateResult {
    const kids = n.children ?? [];
    const open = this.#expanded.get(n.id) ?? depth < 5;
    const shown = kids;
    return html`<div class="node ${this.hits.has(n.id) ? "hit" : ""}" data-id=${n.id}>
      <span class="head" @click=${() => {
        this.#expanded.set(n.id, !open);
        this.requestUpdate();
      }}>${kids.length > 0 ? (open ? "▾ " : "▸ ") : "  "}<span class="tag">${n.tag}</span> <span class="nid">#${n.id}</span>${Object.entries(
        n.attrs,
      ).map(
        ([k, v]) =>
          html` <span class="an">${k}</span>=<span class="av" title=${v.length > 40 ? v : ""}>"${visible(/^[0-9a-f]{64}$/.test(v) ? `${v.slice(0, 12)}…` : v)}"</span>`,
      )}${!open && kids.length > 0 ? html` <span class="dim">(${kids.some((k) => "elided" in k) ? "many" : kids.length})</span>` : nothing}</span>
      ${
        n.text !== undefined && n.text !== ""
          ? html`<span class="tx" data-test="text">${visible(n.text)}${n.textLength !== undefined ? html`<button @click=${() => void this.#fullText(n)}>… ${n.textLength - n.text.length} more characters</button>` : nothing}</span>`
          : nothing
      }
      ${
        open
          ? shown.map((c) =>
              "elided" in c
                ? html`<div class="node"><button data-test="more" @click=${() => void this.#more(n, c)}>… more</button></div>`
                : this.#node(c, depth + 1),
            )
          : nothing
      }
    </div>`;
  }

  #diffView(): TemplateResult {
    if (this.base === undefined)
      return html`<p class="dim">Shift-click an event in the timeline to diff the selected event against it.</p>`;
    const d = this.diff?.diff;
    if (d === undefined) return html`<p class="dim">loading…</p>`;
    const spec = (s: Spec): string =>
      `<${s.tag}${Object.entries(s.attrs ?? {})
        .map(([k, v]) => ` ${k}="${v}"`)
        .join(
          "",
        )}>${s.text ? ` ${JSON.stringify(s.text.slice(0, 120))}` : ""}${s.children?.length ? ` (+${s.children.length} children)` : ""}`;
    const empty = d.added.length + d.removed.length + d.attrs.length + d.text.length + d.moved.length === 0;
    return html`<div class="diff" data-test="diff">
      <div class="dim">from event ${this.diff?.from} to event ${this.diff?.to}</div>
      ${empty ? html`<div class="dim">no difference</div>` : nothing}
      ${d.added.map((a) => html`<div class="add">+ #${a.id} ${visible(spec(a.node))} <span class="dim">in #${a.at.parent}</span></div>`)}
      ${d.removed.map((a) => html`<div class="del">- #${a.id} ${visible(spec(a.node))} <span class="dim">from #${a.at.parent}</span></div>`)}
      ${d.attrs.map((a) => html`<div class="chg">~ #${a.id} @${a.name}: ${visible(a.before ?? "∅")} → ${visible(a.after ?? "∅")}</div>`)}
      ${d.text.map((t) => html`<div class="chg">~ #${t.id} text: ${visible(t.before.slice(0, 200))} → ${visible(t.after.slice(0, 200))}</div>`)}
      ${d.moved.map((m) => html`<div class="chg">↷ #${m.id} moved from #${m.from.parent} to #${m.to.parent}</div>`)}
    </div>`;
  }

  #promptView(): TemplateResult {
    const r = this.prompt?.request;
    if (r === undefined) return html`<p class="dim">loading…</p>`;
    return html`<div data-test="prompt">
      <div class="role">system</div><pre class="msg">${visible(r.system)}</pre>
      ${r.messages.map(
        (m) =>
          html`<div class="role">${m.role}${m.toolCallId ? ` (${m.toolCallId})` : ""}</div><pre class="msg">${visible(m.content + (m.toolCalls ?? []).map((c) => `\n[call ${c.id}] ${c.name} ${c.arguments}`).join(""))}</pre>`,
      )}
      <div class="role">tools</div><pre class="msg">${visible(r.tools.map((t) => `${t.name}: ${t.description}`).join("\n"))}</pre>
      <div class="role">settings</div><pre class="msg">${JSON.stringify(r.settings)}</pre>
    </div>`;
  }
}

customElements.define("strata-app", StrataApp);
customElements.define("strata-sessions", SessionList);
customElements.define("strata-session", SessionView);
