/**
 * `<strata-conversation>`, the conversation at the selected event (IN-26, IN-27): the body's
 * turns, calls and the rest as a reader follows them — messages, tool calls with their
 * arguments, streamed output and result, each call's file diff, and marks for whatever did not go
 * as planned — each element drawn by the renderer of its tag (`../conversation/renderers.ts`).
 *
 * Renders `conversation`, the last window of `<body>` at event `conversation.event` of `session`
 * on `branch` (the session view fetches it as it fetches the tree: on every selection, and as a
 * followed run moves the head). It loads the rest itself — earlier items ("… earlier"), a skipped
 * run of children, the rest of a cut text — and, at another event, the earlier items it showed
 * again as they are there. While the view is scrolled to its end it stays there as items arrive.
 * Reports `strata-select` (an event link), `strata-reveal` (an element's id) and `strata-error`.
 */
import { html, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { ConversationResponse, Elided, NodeJson } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import { REGISTRY, type RenderContext } from "../conversation/renderers.ts";
import { visible } from "../text.ts";

/** Items fetched per "… earlier". */
const PAGE = 40;
/** Items shown at most (the endpoint's largest page): older ones are one "… earlier" away again. */
const MAX_SHOWN = 500;
/** Pixels from the end within which the view counts as scrolled to its end. */
const AT_END = 48;

export class ConversationView extends Base {
  static override properties = {
    session: { attribute: false },
    branch: { attribute: false },
    conversation: { attribute: false },
    earlierItems: { state: true },
  };
  session = "";
  branch = "main";
  conversation: ConversationResponse | undefined;
  /** Items before `conversation.items`, loaded by "… earlier" (at `conversation.event`), and whether more precede them. */
  earlierItems: { readonly event: number; readonly items: readonly NodeJson[]; readonly more: boolean } | undefined;
  /** Calls' effects of the earlier pages (the answer's own are in `conversation.calls`). */
  #earlierCalls: Record<string, ConversationResponse["calls"][string]> = {};
  /** Scrolled to its end (or not scrolled yet): stays at its end as items arrive and grow. */
  #stick = true;
  /** The scroll height before prepending earlier items (kept in place). */
  #heightBefore: number | undefined;
  /** The scrolling pane listened to, and the content watched for size changes (a file diff arriving, a text growing). */
  #pane: HTMLElement | null = null;
  #box: Element | null = null;
  readonly #resized = new ResizeObserver(() => {
    if (this.#stick && this.#pane !== null) this.#pane.scrollTop = this.#pane.scrollHeight;
  });
  readonly #onScroll = (): void => {
    const pane = this.#pane;
    // the pane scrolls the other tabs too: only this view's scrolling counts
    if (pane === null || !this.isConnected || !pane.contains(this)) return;
    this.#stick = pane.scrollHeight - pane.scrollTop - pane.clientHeight < AT_END;
  };

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#pane?.removeEventListener("scroll", this.#onScroll);
    this.#pane = null;
    this.#resized.disconnect();
    this.#box = null;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("conversation")) {
      const had = this.earlierItems;
      const c = this.conversation;
      if (had !== undefined && c !== undefined && had.event !== c.event) {
        // another event: the earlier items shown are fetched again as they are there
        this.earlierItems = undefined;
        this.#earlierCalls = {};
        const first = c.items[0];
        if (first !== undefined && c.earlier)
          void this.#loadEarlier(c, first.id, Math.min(MAX_SHOWN - c.items.length, had.items.length), false);
      }
    }
  }

  protected override updated(): void {
    const pane = this.closest<HTMLElement>(".pane");
    if (pane !== this.#pane) {
      this.#pane?.removeEventListener("scroll", this.#onScroll);
      pane?.addEventListener("scroll", this.#onScroll, { passive: true });
      this.#pane = pane;
    }
    const box = this.querySelector(".conversation");
    if (box !== this.#box) {
      this.#resized.disconnect();
      if (box !== null) this.#resized.observe(box);
      this.#box = box;
    }
    if (pane === null) return;
    if (this.#heightBefore !== undefined) {
      pane.scrollTop += pane.scrollHeight - this.#heightBefore;
      this.#heightBefore = undefined;
    } else if (this.#stick) pane.scrollTop = pane.scrollHeight;
  }

  /** Fetches `limit` items before `before` at `c`'s event and shows them above what is shown. */
  async #loadEarlier(c: ConversationResponse, before: number, limit: number, keepPlace: boolean): Promise<void> {
    if (limit <= 0) return;
    try {
      const r = await get("conversation", { session: this.session }, { branch: this.branch, at: c.event, before, limit });
      if (this.conversation !== c) return;
      if (keepPlace && this.#pane !== null) this.#heightBefore = this.#pane.scrollHeight;
      Object.assign(this.#earlierCalls, r.calls);
      this.earlierItems = { event: c.event, items: [...r.items, ...(this.earlierItems?.items ?? [])], more: r.earlier };
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  /** Loads a skipped run of `parent`'s children (the window left it out, IN-15). */
  async #more(parent: NodeJson, gap: Elided, event: number): Promise<void> {
    const { after, before } = gap.elided;
    try {
      const r = await get(
        "children",
        { session: this.session },
        { branch: this.branch, at: event, id: parent.id, after, before, limit: 500 },
      );
      const list = parent.children ?? [];
      const last = r.children[r.children.length - 1];
      const rest: Elided[] = r.more && last !== undefined ? [{ elided: { after: last.id, before } }] : [];
      list.splice(list.indexOf(gap), 1, ...r.children, ...rest);
      this.requestUpdate();
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  /** Loads the whole text of `n`, which the window cut. */
  async #fullText(n: NodeJson, event: number): Promise<void> {
    try {
      const r = await get("text", { session: this.session }, { branch: this.branch, at: event, id: n.id });
      n.text = r.text;
      delete n.textLength;
      this.requestUpdate();
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  #context(c: ConversationResponse): RenderContext {
    const ctx: RenderContext = {
      event: c.event,
      calls: { ...this.#earlierCalls, ...c.calls },
      session: this.session,
      branch: this.branch,
      element: (n) => REGISTRY.render(n, ctx),
      children: (n, keep) =>
        (n.children ?? []).flatMap((k) =>
          "elided" in k
            ? [html`<button class="c-more" data-test="more" @click=${() => void this.#more(n, k, c.event)}>… more</button>`]
            : keep === undefined || keep(k)
              ? [REGISTRY.render(k, ctx)]
              : [],
        ),
      text: (n) =>
        html`${visible(n.text ?? "")}${n.textLength !== undefined && n.text !== undefined ? html`<button class="c-more" data-test="more-text" @click=${() => void this.#fullText(n, c.event)}>… ${n.textLength - n.text.length} more characters</button>` : nothing}`,
      ref: (n) =>
        html`<button class="c-ref" title="show in the tree" @click=${() => this.emit("strata-reveal", { id: n.id })}>#${n.id}</button>`,
      eventLink: (e) =>
        html`<button class="c-ref" data-test="event-link" title=${`select event ${e.id}${e.label === null ? "" : ` (${e.label})`}`} @click=${() => this.emit("strata-select", { index: e.depth - 1 })}>event ${e.id}</button>`,
    };
    return ctx;
  }

  override render(): TemplateResult {
    const c = this.conversation;
    if (c === undefined) return html`<p class="dim">loading…</p>`;
    const ctx = this.#context(c);
    const earlier = this.earlierItems?.event === c.event ? this.earlierItems : undefined;
    const items = [...(earlier?.items ?? []), ...c.items];
    const more = earlier === undefined ? c.earlier : earlier.more;
    const first = items[0];
    return html`<div class="conversation" data-test="conversation" data-at=${c.event}>
      ${
        more && first !== undefined
          ? items.length < MAX_SHOWN
            ? html`<button class="c-more" data-test="earlier" @click=${() => void this.#loadEarlier(c, first.id, Math.min(PAGE, MAX_SHOWN - items.length), true)}>… earlier</button>`
            : html`<p class="dim">… earlier items: select an earlier event, or see them in the tree</p>`
          : nothing
      }
      ${items.length === 0 ? html`<p class="dim" data-test="empty">Nothing in the body at event ${c.event} yet.</p>` : nothing}
      ${items.map((n) => REGISTRY.render(n, ctx))}
    </div>`;
  }
}
customElements.define("strata-conversation", ConversationView);
