/**
 * `<strata-app>`, the page's shell (IN-10, IN-11): shows the session list, or one session's view, as
 * the location's hash says. A new session or branch in the hash makes a new session view; a new
 * `at` alone does not (the session view writes it as it scrubs).
 */
import { html } from "lit";
import { keyed } from "lit/directives/keyed.js";
import { Base } from "./base.ts";
import { currentRoute, type Route } from "./route.ts";
import "./views/sessions.ts";
import "./views/session.ts";

export class StrataApp extends Base {
  static override properties = { r: { state: true } };
  r: Route = currentRoute();

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener("hashchange", () => {
      const next = currentRoute();
      if (next.session !== this.r.session || next.branch !== this.r.branch) this.r = next;
    });
  }

  override render(): unknown {
    if (this.r.session === undefined) return html`<strata-sessions></strata-sessions>`;
    // Keyed: another session or branch is another view (its timeline, tree and stream), not this one updated.
    return keyed(
      `${this.r.session}\n${this.r.branch ?? "main"}`,
      html`<strata-session .session=${this.r.session} .branch=${this.r.branch ?? "main"} .initialAt=${this.r.at} .initialTab=${this.r.tab}></strata-session>`,
    );
  }
}
customElements.define("strata-app", StrataApp);
