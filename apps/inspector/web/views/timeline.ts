/**
 * `<strata-timeline>`, a branch's events (IN-12): a range input with the position, and a
 * virtualized list of every event — only the rows in view are rendered, their pages fetched as
 * they scroll into view.
 *
 * Renders `total` rows from `rows` (re-rendered when `rows.version` changes), marking the row at
 * `index` selected and the one at `base` as the diff base. Reports `strata-select` (a click, the
 * range input, arrow keys, PageUp/PageDown, Home, End) and `strata-base` (a shift-click) with the
 * row's index; the container decides and sets `index` and `base` back.
 */
import { html, type TemplateResult } from "lit";
import { Base, css } from "../base.ts";
import type { EventPages } from "../pages.ts";
import { visible } from "../text.ts";

/** A row's height in pixels (styles.css: `.events .row`). */
const ROW = 22;

/** The row a key moves the selection by (0: not a step key). */
function stepOf(key: string): number {
  if (key === "ArrowDown" || key === "ArrowRight") return 1;
  if (key === "ArrowUp" || key === "ArrowLeft") return -1;
  if (key === "PageDown") return 20;
  if (key === "PageUp") return -20;
  return 0;
}

export class Timeline extends Base {
  static override properties = {
    rows: { attribute: false },
    version: { attribute: false },
    total: { attribute: false },
    index: { attribute: false },
    base: { attribute: false },
    listTop: { state: true },
    height: { state: true },
  };
  rows: EventPages | undefined;
  /** `rows.version` when the container rendered (a change re-renders the rows). */
  version = 0;
  total = 0;
  index = -1;
  base: number | undefined;
  listTop = 0;
  height = 600;

  /** Scrolls the selected row to the middle of the list (when the view opens). */
  center(): void {
    const list = this.#list();
    if (list === null) return;
    this.height = list.clientHeight;
    list.scrollTop = Math.max(0, this.index * ROW - list.clientHeight / 2);
  }

  #list(): HTMLElement | null {
    return this.querySelector<HTMLElement>(".events");
  }

  #onKey(e: KeyboardEvent): void {
    const step = stepOf(e.key);
    if (step === 0) {
      if (e.key === "End") this.emit("strata-select", { index: this.total - 1 });
      else if (e.key === "Home") this.emit("strata-select", { index: 0 });
      return;
    }
    e.preventDefault();
    // The container clamps the index; the row after the new one (in the step's direction) is kept in view too.
    const next = Math.max(0, Math.min(this.total - 1, this.index + step));
    this.emit("strata-select", { index: this.index + step });
    const list = this.#list();
    if (list !== null) {
      const y = (next + step) * ROW;
      if (y < list.scrollTop) list.scrollTop = y;
      else if (y + ROW > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW - list.clientHeight;
    }
  }

  override render(): TemplateResult {
    return html`<div class="scrub">
        <input type="range" data-test="scrubber" min="0" max=${Math.max(0, this.total - 1)} .value=${String(this.index)} @input=${(e: Event) => this.emit("strata-select", { index: Number((e.target as HTMLInputElement).value) })} @keydown=${(e: KeyboardEvent) => e.stopPropagation()} />
        <span data-test="position">${this.index + 1} / ${this.total}</span>
      </div>
      <div class="events" tabindex="0" data-test="events" @keydown=${(e: KeyboardEvent) => this.#onKey(e)} @scroll=${(e: Event) => {
        this.listTop = (e.target as HTMLElement).scrollTop;
        this.height = (e.target as HTMLElement).clientHeight;
      }}>
        ${this.#rows()}
      </div>`;
  }

  #rows(): TemplateResult {
    const first = Math.max(0, Math.floor(this.listTop / ROW) - 5);
    const last = Math.min(this.total, first + Math.ceil(this.height / ROW) + 12);
    const out: TemplateResult[] = [];
    for (let i = first; i < last; i++) {
      const e = this.rows?.row(i);
      const cls = `row${i === this.index ? " sel" : ""}${i === this.base ? " base" : ""}`;
      out.push(
        html`<div class=${cls} data-row=${i} data-event=${e?.id ?? ""} ${css({ top: `${i * ROW}px` })} @click=${(ev: MouseEvent) => {
          this.emit(ev.shiftKey ? "strata-base" : "strata-select", { index: i });
        }}><span class="id">${e?.id ?? "…"}</span>${visible(e?.label ?? e?.kind ?? "")} <span class="dim">${e?.by ? `by ${visible(e.by)}` : ""}</span></div>`,
      );
    }
    return html`<div ${css({ height: `${this.total * ROW}px`, position: "relative" })}>${out}</div>`;
  }
}
customElements.define("strata-timeline", Timeline);
