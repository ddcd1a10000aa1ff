/**
 * `<strata-sessions>`, the session list (IN-10): every session of the database with its branch
 * and event counts and its last activity; each links to the session's view. Fetches the list
 * itself when connected.
 */
import { html, nothing, type TemplateResult } from "lit";
import type { SessionRow } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { get } from "../client.ts";
import { sessionLink } from "../route.ts";
import { time, visible } from "../text.ts";

export class SessionList extends Base {
  static override properties = { rows: { state: true }, error: { state: true } };
  rows: readonly SessionRow[] | undefined;
  error = "";

  override async connectedCallback(): Promise<void> {
    super.connectedCallback();
    try {
      this.rows = (await get("sessions", {})).sessions;
    } catch (e) {
      this.error = (e as Error).message;
    }
  }

  override render(): TemplateResult {
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
                  html`<tr><td><a href=${sessionLink(s.id)} data-session=${s.id}>${s.id}</a></td><td>${visible(s.title ?? "")}</td><td>${s.branches}</td><td>${s.events}</td><td>${time(s.lastActivity)}</td><td class="dim">${s.lastLabel ?? ""}</td></tr>`,
              )}
            </table>`
      }`;
  }
}
customElements.define("strata-sessions", SessionList);
