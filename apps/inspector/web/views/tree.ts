/**
 * `<strata-tree>`, the tree at the selected event (IN-14 … IN-16): collapsible elements with
 * their ids, attributes and text; the `hits` of a selector search highlighted, and revealed
 * (their ancestors opened) when they arrive.
 *
 * Renders `tree`, the windowed tree of event `tree.event` of `session` on `branch`. It loads
 * what the window left out itself — a skipped run of children ("… more"), the rest of a cut text —
 * and reports a failed load as `strata-error`. Which elements are open is its own state, kept by
 * element id for as long as the element lives (the session view keeps it across tab switches).
 */
import { html, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { Elided, NodeJson, TreeResponse } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import { visible } from "../text.ts";

/** Elements deeper than this start closed. */
const OPEN_DEPTH = 5;

export class TreeView extends Base {
  static override properties = {
    session: { attribute: false },
    branch: { attribute: false },
    tree: { attribute: false },
    hits: { attribute: false },
  };
  session = "";
  branch = "main";
  tree: TreeResponse | undefined;
  hits: ReadonlySet<number> = new Set();
  /** Open (true) or closed (false) by the user or a search; absent: by depth. */
  readonly #expanded = new Map<number, boolean>();
  /** Each shown element's parent, to reveal a hit. */
  #parents = new Map<number, number>();

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("tree")) {
      this.#parents = new Map();
      const walk = (n: NodeJson) => {
        for (const c of n.children ?? []) {
          if ("elided" in c) continue;
          this.#parents.set(c.id, n.id);
          walk(c);
        }
      };
      if (this.tree !== undefined) walk(this.tree.root);
    }
    if (changed.has("hits"))
      for (const id of this.hits)
        for (let p = this.#parents.get(id); p !== undefined; p = this.#parents.get(p)) this.#expanded.set(p, true);
  }

  protected override updated(changed: PropertyValues<this>): void {
    // a search's first match, or the element the conversation asked for, scrolled into view
    if (changed.has("hits") && this.hits.size > 0) this.querySelector(".node.hit")?.scrollIntoView({ block: "center" });
  }

  override render(): TemplateResult {
    return this.tree === undefined
      ? html`<p class="dim">loading…</p>`
      : html`<div class="tree" data-test="tree" data-at=${this.tree.event}>${this.#node(this.tree.root, 0)}</div>`;
  }

  /** Loads a skipped run of `parent`'s children (IN-15: the tree arrives windowed). */
  async #more(parent: NodeJson, gap: Elided): Promise<void> {
    if (this.tree === undefined) return;
    const { after, before } = gap.elided;
    try {
      const r = await get(
        "children",
        { session: this.session },
        { branch: this.branch, at: this.tree.event, id: parent.id, after, before, limit: 500 },
      );
      const list = parent.children ?? [];
      const at = list.indexOf(gap);
      const last = r.children[r.children.length - 1];
      const rest: Elided[] = r.more && last !== undefined ? [{ elided: { after: last.id, before } }] : [];
      list.splice(at, 1, ...r.children, ...rest);
      for (const c of r.children) this.#parents.set(c.id, parent.id);
      this.requestUpdate();
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  /** Loads the whole text of `n`, which the window cut. */
  async #fullText(n: NodeJson): Promise<void> {
    if (this.tree === undefined) return;
    try {
      const r = await get("text", { session: this.session }, { branch: this.branch, at: this.tree.event, id: n.id });
      n.text = r.text;
      delete n.textLength;
      this.requestUpdate();
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  #node(n: NodeJson, depth: number): TemplateResult {
    const kids = n.children ?? [];
    const open = this.#expanded.get(n.id) ?? depth < OPEN_DEPTH;
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
          ? kids.map((c) =>
              "elided" in c
                ? html`<div class="node"><button data-test="more" @click=${() => void this.#more(n, c)}>… more</button></div>`
                : this.#node(c, depth + 1),
            )
          : nothing
      }
    </div>`;
  }
}
customElements.define("strata-tree", TreeView);
