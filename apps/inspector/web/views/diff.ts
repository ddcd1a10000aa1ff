/**
 * `<strata-diff>`, the diff between two events (IN-14): added and removed subtrees, attribute
 * and text changes, moves. Renders `diff` (the answer for the diff base against the selected
 * event), or a hint while there is no `base`; reports nothing.
 */
import type { NodeSpec } from "@strata/dom";
import { html, nothing, type TemplateResult } from "lit";
import type { DiffResponse } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { visible } from "../text.ts";

/** A subtree on one line: its start tag, the start of its text, how many children it has. */
function spec(s: NodeSpec): string {
  return `<${s.tag}${Object.entries(s.attrs ?? {})
    .map(([k, v]) => ` ${k}="${v}"`)
    .join("")}>${s.text ? ` ${JSON.stringify(s.text.slice(0, 120))}` : ""}${s.children?.length ? ` (+${s.children.length} children)` : ""}`;
}

export class DiffView extends Base {
  static override properties = { diff: { attribute: false }, base: { attribute: false } };
  diff: DiffResponse | undefined;
  /** The diff base's row; undefined until an event is shift-clicked. */
  base: number | undefined;

  override render(): TemplateResult {
    if (this.base === undefined)
      return html`<p class="dim">Shift-click an event in the timeline to diff the selected event against it.</p>`;
    const d = this.diff?.diff;
    if (d === undefined) return html`<p class="dim">loading…</p>`;
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
}
customElements.define("strata-diff", DiffView);
