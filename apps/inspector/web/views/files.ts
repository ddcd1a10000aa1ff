/**
 * `<strata-files>`, the workspace at the selected event (IN-25): every file the tree records —
 * mode, size, path, hash — in path order; clicking a file opens its content below it (text as
 * text, control characters made visible; a symlink's target; a binary file by size and hash).
 *
 * Renders `files`, the first page of the workspace at event `files.event` of `session` on
 * `branch`. It loads what that page left out itself ("… more files"), and each opened file's
 * content; a failed load is reported as `strata-error`, except a file's own refusal (too large,
 * bytes missing), which is shown in its place. Which file is open is its own state, kept across
 * events: at another event the open file is shown as it was there, or as absent.
 */
import { html, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { FileResponse, FileRow, FilesResponse } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import { visible } from "../text.ts";

/** Files fetched per "… more files". */
const PAGE = 1000;

/** `n` bytes for a reader: `812 B`, `12.3 KiB`, `4.0 MiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A hash as the tree view shows one: its first 12 digits (the whole in the title). */
export function shortHash(h: string): string {
  return `${h.slice(0, 12)}…`;
}

/** An opened file: its answer, or why there is none at the shown event. */
type Opened = { readonly at: number; readonly answer: FileResponse } | { readonly at: number; readonly refused: string } | undefined;

export class FilesView extends Base {
  static override properties = {
    session: { attribute: false },
    branch: { attribute: false },
    files: { attribute: false },
    rows: { state: true },
    opened: { state: true },
  };
  session = "";
  branch = "main";
  files: FilesResponse | undefined;
  /** The rows shown: `files.files` and the pages loaded after it. */
  rows: readonly FileRow[] = [];
  /** The open file's path (kept across events) and what was fetched for it. */
  #path: string | undefined;
  opened: Opened;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has("files")) {
      this.rows = this.files?.files ?? [];
      if (this.files !== undefined && this.#path !== undefined) void this.#open(this.#path);
    }
  }

  async #more(): Promise<void> {
    const f = this.files;
    if (f === undefined) return;
    try {
      const page = await get(
        "files",
        { session: this.session },
        { branch: this.branch, at: f.event, offset: this.rows.length, limit: PAGE },
      );
      if (this.files !== f) return;
      this.rows = [...this.rows, ...page.files];
    } catch (e) {
      this.emit("strata-error", { message: (e as Error).message });
    }
  }

  /** Opens `path` at the shown event (a refusal — absent there, too large — is shown in its place). */
  async #open(path: string): Promise<void> {
    const f = this.files;
    if (f === undefined) return;
    this.#path = path;
    const at = f.event;
    try {
      const answer = await get("file", { session: this.session }, { branch: this.branch, at, path });
      if (this.files === f && this.#path === path) this.opened = { at, answer };
    } catch (e) {
      if (this.files === f && this.#path === path) this.opened = { at, refused: (e as Error).message };
    }
  }

  #toggle(path: string): void {
    if (this.#path === path) {
      this.#path = undefined;
      this.opened = undefined;
    } else {
      this.opened = undefined;
      void this.#open(path);
    }
  }

  override render(): TemplateResult {
    const f = this.files;
    if (f === undefined) return html`<p class="dim">loading…</p>`;
    if (!f.tracked)
      return html`<div class="files" data-test="files" data-at=${f.event}>
        <p class="dim">No workspace is recorded at event ${f.event}: it starts at the event labelled workspace.baseline, before the first tool that may write files runs.</p>
      </div>`;
    const opened = this.#path === undefined ? undefined : this.opened;
    const absent = this.#path !== undefined && opened !== undefined && opened.at === f.event && "refused" in opened;
    return html`<div class="files" data-test="files" data-at=${f.event}>
      <div class="dim" data-test="files-summary">workspace at event ${f.event}: ${f.total} files, ${bytes(f.bytes)}${f.dir === null ? "" : html` in <span title=${f.dir}>${visible(f.dir)}</span>`}</div>
      <table class="ws">
        ${this.rows.map((r) => this.#row(r))}
      </table>
      ${this.rows.length < f.total ? html`<button data-test="more-files" @click=${() => void this.#more()}>… ${f.total - this.rows.length} more files</button>` : nothing}
      ${absent && !this.rows.some((r) => r.path === this.#path) ? html`<div class="file-body dim" data-test="file">${visible(this.#path ?? "")}: ${visible((opened as { refused: string }).refused)}</div>` : nothing}
    </div>`;
  }

  #row(r: FileRow): TemplateResult {
    const open = r.path === this.#path;
    return html`<tr class="file ${open ? "on" : ""}" data-path=${r.path} @click=${() => this.#toggle(r.path)}>
        <td class="mode">${r.mode}</td>
        <td class="size">${bytes(r.size)}</td>
        <td class="path">${visible(r.path)}</td>
        <td class="hash" title=${r.hash}>${shortHash(r.hash)}</td>
      </tr>
      ${open ? html`<tr><td colspan="4">${this.#body(r)}</td></tr>` : nothing}`;
  }

  /** The open file's content, once it has arrived for the shown event. */
  #body(r: FileRow): TemplateResult {
    const o = this.opened;
    if (o === undefined || o.at !== this.files?.event) return html`<div class="file-body dim" data-test="file">loading…</div>`;
    if ("refused" in o) return html`<div class="file-body err" data-test="file">${visible(o.refused)}</div>`;
    const c = o.answer.content;
    switch (c.kind) {
      case "text":
        return html`<pre class="file-body" data-test="file">${visible(c.text)}</pre>`;
      case "link":
        return html`<div class="file-body" data-test="file">symbolic link → ${visible(c.target)}</div>`;
      case "binary":
        return html`<div class="file-body dim" data-test="file">binary file: ${r.size} bytes, sha256 ${r.hash}</div>`;
      default: {
        const never: never = c;
        throw new Error(`no view for file content ${JSON.stringify(never)}`);
      }
    }
  }
}
customElements.define("strata-files", FilesView);
