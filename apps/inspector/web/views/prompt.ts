/**
 * `<strata-prompt>`, the prompt at the selected event (IN-14): the system text, every message
 * with its tool calls, the tools and the settings — exactly what the model would be sent.
 * Renders `prompt`; reports nothing.
 */
import { html, type TemplateResult } from "lit";
import type { PromptResponse } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { visible } from "../text.ts";

export class PromptView extends Base {
  static override properties = { prompt: { attribute: false } };
  prompt: PromptResponse | undefined;

  override render(): TemplateResult {
    const r = this.prompt?.request;
    if (r === undefined) return html`<p class="dim">loading…</p>`;
    return html`<div data-test="prompt">
      <div class="role">system</div><pre class="msg">${visible(r.system)}</pre>
      ${r.messages.map(
        (m) =>
          html`<div class="role">${m.role}${m.role === "tool" && m.toolCallId ? ` (${m.toolCallId})` : ""}</div><pre class="msg">${visible(m.content + (m.role === "assistant" ? (m.toolCalls ?? []) : []).map((c) => `\n[call ${c.id}] ${c.name} ${c.arguments}`).join(""))}</pre>`,
      )}
      <div class="role">tools</div><pre class="msg">${visible(r.tools.map((t) => `${t.name}: ${t.description}`).join("\n"))}</pre>
      <div class="role">settings</div><pre class="msg">${JSON.stringify(r.settings)}</pre>
    </div>`;
  }
}
customElements.define("strata-prompt", PromptView);
