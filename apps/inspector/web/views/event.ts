/**
 * `<strata-event>`, the raw selected event (IN-14): its index entry and payload as JSON, control
 * characters made visible. Renders `detail`; reports nothing.
 */
import { html, type TemplateResult } from "lit";
import type { EventDetail } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { visible } from "../text.ts";

export class EventView extends Base {
  static override properties = { detail: { attribute: false } };
  detail: EventDetail | undefined;

  override render(): TemplateResult {
    return html`<pre class="msg" data-test="event-detail">${this.detail === undefined ? "" : visible(JSON.stringify(this.detail, null, 2))}</pre>`;
  }
}
customElements.define("strata-event", EventView);
