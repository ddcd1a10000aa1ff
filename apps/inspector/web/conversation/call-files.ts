/**
 * `<strata-call-files>`, the files one call changed (IN-27): the file diff (IN-24) from the event
 * before the call's settle event to that event — exactly the changes its outcome carried (WS-22) —
 * shown by the files tab's own view (`<strata-file-diff>`). Nothing is shown when the event
 * changed no file after all.
 *
 * Answers are kept by their two events (a past event's diff never changes), so a conversation
 * re-rendered while it follows a run asks for each call's diff once.
 */
import { html, nothing, type PropertyValues, type TemplateResult } from "lit";
import type { FileDiffResponse } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import "../views/file-diff.ts";

/** Answers kept at most. */
const KEEP = 200;
const answers = new Map<string, Promise<FileDiffResponse>>();

function fileDiffOf(session: string, branch: string, from: number, to: number): Promise<FileDiffResponse> {
  const key = `${session}\n${from}\n${to}`;
  let hit = answers.get(key);
  if (hit === undefined) {
    hit = get("filediff", { session }, { branch, from, to });
    // a failed request is asked again the next time
    hit.catch(() => answers.delete(key));
    if (answers.size >= KEEP) answers.delete(answers.keys().next().value as string);
    answers.set(key, hit);
  }
  return hit;
}

export class CallFiles extends Base {
  static override properties = {
    session: { attribute: false },
    branch: { attribute: false },
    from: { attribute: false },
    to: { attribute: false },
    diff: { state: true },
  };
  session = "";
  branch = "main";
  from = 0;
  to = 0;
  diff: FileDiffResponse | undefined;

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (!changed.has("from") && !changed.has("to")) return;
    const { from, to } = this;
    if (this.diff?.from !== from || this.diff?.to !== to) this.diff = undefined;
    fileDiffOf(this.session, this.branch, from, to).then(
      (d) => {
        if (this.from === from && this.to === to) this.diff = d;
      },
      (e: Error) => this.emit("strata-error", { message: e.message }),
    );
  }

  override render(): TemplateResult | typeof nothing {
    const d = this.diff;
    if (d === undefined) return html`<div class="dim c-files" data-test="call-files-loading">files…</div>`;
    if (d.total === 0) return nothing;
    return html`<div class="c-files" data-test="call-files"><div class="c-label">files changed</div>
      <strata-file-diff .session=${this.session} .branch=${this.branch} .diff=${d}></strata-file-diff></div>`;
  }
}
customElements.define("strata-call-files", CallFiles);
