/**
 * `<strata-session>`, one session's view (IN-10 … IN-14): the header (title, branch, live
 * state), the branch graph and the timeline on the left, and on the right the selected event's
 * tabs — tree (with selector search), diff, files (the workspace and the file diff), prompt, raw
 * event.
 *
 * It holds the view's state — the selected row, the diff base, the tab, what each tab shows —
 * and the requests that fill it: it fetches for the selected event what the open tab needs, and
 * follows the branch live (IN-13) while the selection is the head. The views it composes render
 * what it passes them and report selection by events (`base.ts`). One element shows one session
 * and branch for its lifetime: the shell makes a new one for another (IN-11).
 */
import { html, nothing, type TemplateResult } from "lit";
import { cache } from "lit/directives/cache.js";
import type {
  ConversationResponse,
  DiffResponse,
  EventDetail,
  FileDiffResponse,
  FilesResponse,
  PromptResponse,
  SessionResponse,
  TreeResponse,
} from "../../src/protocol.ts";
import { Base, eventDetail } from "../base.ts";
import { get } from "../client.ts";
import { follow, type LiveState } from "../follow.ts";
import { EventPages } from "../pages.ts";
import { listHref, sessionHash } from "../route.ts";
import { time, visible } from "../text.ts";
import type { Timeline } from "./timeline.ts";
import "./branches.ts";
import "./conversation.ts";
import "./diff.ts";
import "./event.ts";
import "./file-diff.ts";
import "./files.ts";
import "./prompt.ts";
import "./timeline.ts";
import "./tree.ts";

type Tab = "tree" | "conversation" | "diff" | "files" | "prompt" | "event";
const TABS: readonly Tab[] = ["tree", "conversation", "diff", "files", "prompt", "event"];

export class SessionView extends Base {
  static override properties = {
    session: {},
    branch: {},
    initialAt: {},
    initialTab: {},
    info: { state: true },
    total: { state: true },
    head: { state: true },
    index: { state: true },
    base: { state: true },
    tab: { state: true },
    tree: { state: true },
    hits: { state: true },
    conversation: { state: true },
    diff: { state: true },
    files: { state: true },
    fileDiff: { state: true },
    prompt: { state: true },
    detail: { state: true },
    error: { state: true },
    following: { state: true },
    live: { state: true },
    rowsVersion: { state: true },
  };
  session = "";
  branch = "main";
  initialAt: number | undefined;
  /** The tab the address names (another branch opens with the tab the last one had). */
  initialTab: string | undefined;
  info: SessionResponse | undefined;
  total = 0;
  head = 0;
  /** Selected row (0-based depth index) and the diff base row. */
  index = -1;
  base: number | undefined;
  tab: Tab = "tree";
  tree: TreeResponse | undefined;
  hits: ReadonlySet<number> = new Set();
  /** The conversation tab: the last window of the body at the selected event (IN-26). */
  conversation: ConversationResponse | undefined;
  diff: DiffResponse | undefined;
  /** The files tab: the workspace at the selected event, and the file diff from the base to it. */
  files: FilesResponse | undefined;
  fileDiff: FileDiffResponse | undefined;
  prompt: PromptResponse | undefined;
  detail: EventDetail | undefined;
  error = "";
  following = true;
  live: LiveState = "off";
  /** The timeline's rows' version (a page arrived). */
  rowsVersion = 0;
  #pages: EventPages | undefined;
  #stop: (() => void) | undefined;
  #treeTimer: ReturnType<typeof setTimeout> | undefined;
  #query = "";
  /** The element the conversation asked the tree to show (a hit while there is no search). */
  #revealed: number | undefined;

  override async connectedCallback(): Promise<void> {
    super.connectedCallback();
    const tab = TABS.find((t) => t === this.initialTab);
    if (tab !== undefined) this.tab = tab;
    await this.#load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#stop?.();
  }

  get #rows(): EventPages {
    this.#pages ??= new EventPages(
      this.session,
      this.branch,
      () => {
        this.rowsVersion = this.#rows.version;
      },
      (message) => {
        this.error = message;
      },
    );
    return this.#pages;
  }

  async #load(): Promise<void> {
    try {
      this.info = await get("session", { session: this.session });
      this.#rows.clear();
      const first = await this.#rows.load(0);
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
      requestAnimationFrame(() => this.querySelector<Timeline>("strata-timeline")?.center());
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  /** The live stream (IN-13): new events extend the timeline; following keeps the tree at the head. */
  #connect(): void {
    this.#stop?.();
    this.#stop = follow(this.session, this.branch, this.head, {
      state: (s) => {
        this.live = s;
      },
      patch: (id) => {
        this.total += 1;
        this.head = id;
        // the last page is stale now; it is fetched again when shown
        this.#rows.stale(this.total - 1);
        if (this.following) void this.#select(this.total - 1, true);
        else this.requestUpdate();
      },
      reset: async (at) => {
        const event = await get("event", { session: this.session, event: at });
        // A rewind keeps the abandoned head as a branch of its own: the graph shows it.
        this.info = await get("session", { session: this.session });
        this.#rows.clear();
        this.total = event.depth;
        this.head = at;
        await this.#select(this.total - 1);
      },
      ended: (message) => {
        this.error = `live stream stopped: ${message}`;
      },
      failed: (message) => {
        this.error = message;
      },
    });
  }

  /** Selects row `i` (scrubbing, a click, arrow keys, or following). */
  async #select(i: number, follow = false): Promise<void> {
    if (this.total === 0) return;
    const index = Math.max(0, Math.min(this.total - 1, i));
    this.index = index;
    if (!follow) this.following = index === this.total - 1;
    const row = await this.#rows.rowAsync(index);
    if (row === undefined || this.index !== index) return;
    history.replaceState(null, "", sessionHash(this.session, this.branch, row.id, this.tab));
    clearTimeout(this.#treeTimer);
    this.#treeTimer = setTimeout(() => void this.#refresh(row.id), follow ? 150 : 40);
  }

  /** Fetches what the open tab shows at event `at` (the tree also when there is none yet). */
  async #refresh(at: number): Promise<void> {
    try {
      const session = { session: this.session };
      if (this.tab === "tree" || this.tree === undefined) {
        const t = await get("tree", session, { branch: this.branch, at });
        if (!("root" in t)) throw new Error(`the server answered the tree at event ${at} without one`);
        this.tree = t;
        await this.#search();
      }
      if (this.tab === "conversation") this.conversation = await get("conversation", session, { branch: this.branch, at });
      if (this.tab === "diff" && this.base !== undefined) {
        const from = (await this.#rows.rowAsync(this.base))?.id;
        if (from !== undefined) this.diff = await get("diff", session, { branch: this.branch, from, to: at });
      }
      if (this.tab === "files") {
        const from = this.base === undefined ? undefined : (await this.#rows.rowAsync(this.base))?.id;
        const [files, fileDiff] = await Promise.all([
          get("files", session, { branch: this.branch, at }),
          from === undefined ? undefined : get("filediff", session, { branch: this.branch, from, to: at }),
        ]);
        this.files = files;
        this.fileDiff = fileDiff;
      }
      if (this.tab === "prompt") this.prompt = await get("prompt", session, { branch: this.branch, at });
      if (this.tab === "event") this.detail = await get("event", { ...session, event: at });
      this.error = "";
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  /** The selector search (IN-14): the ids matching the query in the shown tree. */
  async #search(): Promise<void> {
    if (this.#query.trim() === "" || this.tree === undefined) {
      this.hits = this.#revealed === undefined ? new Set() : new Set([this.#revealed]);
      return;
    }
    try {
      const r = await get("tree", { session: this.session }, { branch: this.branch, at: this.tree.event, select: this.#query });
      if (!("matches" in r)) throw new Error(`the server answered the search at event ${r.event} without matches`);
      this.hits = new Set(r.matches);
      this.error = "";
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  #setTab(t: Tab): void {
    this.tab = t;
    const row = this.#rows.row(this.index);
    if (row !== undefined) {
      history.replaceState(null, "", sessionHash(this.session, this.branch, row.id, t));
      void this.#refresh(row.id);
    }
  }

  override render(): TemplateResult {
    if (this.error !== "" && this.info === undefined)
      return html`<header class="top"><a href=${listHref()}>← sessions</a></header><div class="err">${this.error}</div>`;
    if (this.info === undefined) return html`<p class="dim">loading…</p>`;
    const selected = this.#rows.row(this.index);
    return html`<header class="top">
        <a href=${listHref()}>← sessions</a>
        <h1>${visible(this.info.title ?? this.info.id)}</h1>
        <span class="dim">${this.info.id}</span>
        <label>branch
          <select data-test="branch" @change=${(e: Event) => (location.hash = sessionHash(this.session, (e.target as HTMLSelectElement).value, undefined, this.tab))}>
            ${this.info.branches.map((b) => html`<option value=${b.name} ?selected=${b.name === this.branch}>${visible(b.name)}</option>`)}
          </select>
        </label>
        <span data-test="live" class=${this.following ? "live" : "paused"}>${this.live === "live" ? (this.following ? "● live, following" : "❚❚ paused (scrubbed back)") : this.live}</span>
        ${this.following ? nothing : html`<button data-test="follow" @click=${() => void this.#select(this.total - 1)}>follow</button>`}
      </header>
      <div class="layout">
        <div class="left">
          <strata-branches .branches=${this.info.branches} .current=${this.branch} @strata-branch=${(e: Event) => (location.hash = sessionHash(this.session, eventDetail("strata-branch", e).name, undefined, this.tab))}></strata-branches>
          <strata-timeline .rows=${this.#rows} .version=${this.rowsVersion} .total=${this.total} .index=${this.index} .base=${this.base}
            @strata-select=${(e: Event) => void this.#select(eventDetail("strata-select", e).index)}
            @strata-base=${(e: Event) => {
              this.base = eventDetail("strata-base", e).index;
              // a comparison base is for the tree diff, or for the file diff when files are shown
              this.#setTab(this.tab === "files" ? "files" : "diff");
            }}></strata-timeline>
        </div>
        <div class="right">
          <div class="tabs">
            ${TABS.map((t) => html`<button data-tab=${t} class=${this.tab === t ? "on" : ""} @click=${() => this.#setTab(t)}>${t}</button>`)}
            <span class="dim">event ${selected?.id ?? "…"} ${visible(selected?.label ?? "")} ${selected ? time(selected.ts) : ""}</span>
            ${
              this.tab === "tree"
                ? html`<input data-test="select" placeholder="CSS selector, e.g. call[status=running]" size="36" @change=${(e: Event) => {
                    this.#query = (e.target as HTMLInputElement).value;
                    this.#revealed = undefined;
                    void this.#search();
                  }} /> <span class="dim" data-test="hits">${this.#query ? `${this.hits.size} matches` : ""}</span>`
                : nothing
            }
            ${this.tab === "diff" || this.tab === "files" ? html`<span class="dim">${this.base === undefined ? "shift-click an event to diff against it" : `from row ${this.base + 1}`}</span>` : nothing}
          </div>
          ${this.error ? html`<div class="err" data-test="error">${this.error}</div>` : nothing}
          <div class="pane" data-test="pane" @strata-error=${(e: Event) => {
            this.error = eventDetail("strata-error", e).message;
          }} @strata-select=${(e: Event) => void this.#select(eventDetail("strata-select", e).index)}
            @strata-reveal=${(e: Event) => {
              // the element in the tree at the same event: highlighted, its ancestors opened
              this.#revealed = eventDetail("strata-reveal", e).id;
              this.hits = new Set([this.#revealed]);
              this.#setTab("tree");
            }}>${cache(this.#pane())}</div>
        </div>
      </div>`;
  }

  /** The open tab's view (`render` caches each, so the tree keeps what is open across tab switches). */
  #pane(): TemplateResult {
    switch (this.tab) {
      case "tree":
        return html`<strata-tree .session=${this.session} .branch=${this.branch} .tree=${this.tree} .hits=${this.hits}></strata-tree>`;
      case "conversation":
        return html`<strata-conversation .session=${this.session} .branch=${this.branch} .conversation=${this.conversation}></strata-conversation>`;
      case "diff":
        return html`<strata-diff .diff=${this.diff} .base=${this.base}></strata-diff>`;
      case "files":
        return html`<strata-file-diff .session=${this.session} .branch=${this.branch} .diff=${this.fileDiff} .base=${this.base}></strata-file-diff>
          <strata-files .session=${this.session} .branch=${this.branch} .files=${this.files}></strata-files>`;
      case "prompt":
        return html`<strata-prompt .prompt=${this.prompt}></strata-prompt>`;
      case "event":
        return html`<strata-event .detail=${this.detail}></strata-event>`;
      default: {
        const never: never = this.tab;
        throw new Error(`no view for tab ${String(never)}`);
      }
    }
  }
}
customElements.define("strata-session", SessionView);
