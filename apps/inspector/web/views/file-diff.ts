/**
 * `<strata-file-diff>`, the files that changed between the diff base and the selected event
 * (IN-25): each file added, modified or deleted with its sizes and hashes, a unified diff for
 * text (lines coloured as added, removed, hunk headers), and for the rest why there is none —
 * binary, only the mode changed, too large, left out of this answer (a button fetches it alone).
 *
 * Renders `diff`, the first page of the answer for `session` on `branch`, or a hint while there is
 * no `base`; loads the pages and the left-out files itself and reports a failed load as
 * `strata-error`.
 */
import { html, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { FileDelta, FileDiffResponse, FileDiffRow, FileRow } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import { visible } from "../text.ts";
import { bytes, shortHash } from "./files.ts";

/** Changed files fetched per "… more changed files". */
const PAGE = 200;

const MARK: Record<FileDiffRow["change"], string> = { added: "A", modified: "M", deleted: "D" };

/** A unified diff's line: its class by its first character (headers first). */
function lineClass(line: string, i: number): string {
  if (i < 2 && (line.startsWith("--- ") || line.startsWith("+++ "))) return "uh";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("\\")) return "dim";
  return "ctx";
}

function side(r: FileRow | null): string {
  return r === null ? "∅" : `${r.mode} ${bytes(r.size)} ${shortHash(r.hash)}`;
}

export class FileDiffView extends Base {
  static override properties = {
    session: { attribute: false },
    branch: { attribute: false },
    diff: { attribute: false },
    base: { attribute: false },
    rows: { state: true },
  };
  session = "";
  branch = "main";
  diff: FileDiffResponse | undefined;
  /** The diff base's row; undefined until an event is shift-clicked. */
  base: number | undefined;
  /** The rows shown: `diff.changes`, the pages loaded after it, and left-out files fetched alone. */
  rows: readonly FileDiffRow[] = [];

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("diff")) this.rows = this.diff?.changes ?? [];
  }

  async #more(): Promise<void> {
    const d = this.diff;
    if (d === undefined) return;
    try {
      const page = await get(
        "filediff",
        { session: this.session },
        { branch: this.branch, from: d.from, to: d.to, offset: this.rows.length, limit: PAGE },
      );
      if (this.diff === d) this.rows = [...this.rows, ...page.changes];
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  /** Fetches one left-out file's change on its own (its answer's budget is that file's). */
  async #fetch(path: string): Promise<void> {
    const d = this.diff;
    if (d === undefined) return;
    try {
      const one = await get("filediff", { session: this.session }, { branch: this.branch, from: d.from, to: d.to, path });
      const row = one.changes[0];
      if (this.diff === d && row !== undefined) this.rows = this.rows.map((r) => (r.path === path ? row : r));
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  override render(): TemplateResult {
    // In the files tab the diff needs a base; a call's own diff (the conversation) comes with its answer.
    if (this.base === undefined && this.diff === undefined)
      return html`<p class="dim" data-test="file-diff-hint">Shift-click an event in the timeline to see the files changed between it and the selected event.</p>`;
    const d = this.diff;
    if (d === undefined) return html`<p class="dim">loading…</p>`;
    return html`<div class="file-diff" data-test="file-diff" data-from=${d.from} data-to=${d.to}>
      <div class="dim">${d.total === 0 ? `no file changed from event ${d.from} to event ${d.to}` : `${d.total} files changed from event ${d.from} to event ${d.to}`}</div>
      ${this.rows.map((r) => this.#row(r))}
      ${this.rows.length < d.total ? html`<button data-test="more-changes" @click=${() => void this.#more()}>… ${d.total - this.rows.length} more changed files</button>` : nothing}
    </div>`;
  }

  #row(r: FileDiffRow): TemplateResult {
    return html`<div class="fchange ${r.change}" data-path=${r.path} data-change=${r.change}>
      <div class="fhead"><span class="mark">${MARK[r.change]}</span> <span class="path">${visible(r.path)}</span>
        <span class="dim">${side(r.before)} → ${side(r.after)}</span></div>
      ${this.#delta(r, r.delta)}
    </div>`;
  }

  #delta(r: FileDiffRow, delta: FileDelta): TemplateResult {
    switch (delta.kind) {
      case "text": {
        const lines = delta.unified.split("\n");
        if (lines[lines.length - 1] === "") lines.pop();
        return html`<pre class="udiff" data-test="udiff">${lines.map((l, i) => html`<span class=${lineClass(l, i)}>${visible(l)}${"\n"}</span>`)}</pre>
          ${delta.coarse ? html`<div class="dim">a large change: shown as the old lines replaced by the new</div>` : nothing}`;
      }
      case "binary":
        return html`<div class="dim" data-test="binary">binary: ${r.before?.size ?? 0} → ${r.after?.size ?? 0} bytes, sha256 ${r.before?.hash ?? "∅"} → ${r.after?.hash ?? "∅"}</div>`;
      case "same":
        return html`<div class="dim">same bytes; mode ${r.before?.mode} → ${r.after?.mode}</div>`;
      case "too-large":
        return html`<div class="dim">larger than ${bytes(delta.limit)}: compare the sizes and hashes</div>`;
      case "omitted":
        return html`<div class="dim">not diffed in this answer (it reads at most ${bytes(delta.budget)}) <button data-test="fetch-diff" @click=${() => void this.#fetch(r.path)}>show diff</button></div>`;
      case "missing":
        return html`<div class="err">the store has no bytes for ${delta.hashes.map(shortHash).join(", ")}</div>`;
      default: {
        const never: never = delta;
        throw new Error(`no view for file delta ${JSON.stringify(never)}`);
      }
    }
  }
}
customElements.define("strata-file-diff", FileDiffView);
