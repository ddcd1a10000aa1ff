/**
 * `<strata-branches>`, the branch graph (IN-11): one lane per branch over event depth, from its
 * fork point to its head; kept rewound heads are dashed, the `current` branch highlighted.
 * Reports `strata-branch` with the branch's name when a lane is clicked.
 */
import { html, nothing, svg, type TemplateResult } from "lit";
import type { BranchRow } from "../../src/protocol.ts";
import { Base } from "../base.ts";
import { visible } from "../text.ts";

/** The graph's width in SVG units (it scales to the column). */
const WIDTH = 400;

export class Branches extends Base {
  static override properties = { branches: { attribute: false }, current: { attribute: false } };
  branches: readonly BranchRow[] = [];
  current = "main";

  override render(): TemplateResult {
    const branches = this.branches;
    const max = Math.max(1, ...branches.map((b) => b.events));
    const x = (d: number) => 8 + (d / max) * (WIDTH - 16);
    return html`<div class="graph" data-test="graph"><svg viewBox="0 0 ${WIDTH} ${branches.length * 18 + 4}" role="img" aria-label="branches">
      ${branches.map((b, k) => {
        const y = 12 + k * 18;
        const from = b.originDepth ?? 1;
        const current = b.name === this.current;
        return svg`<g class="lane ${current ? "sel" : ""}" @click=${() => this.emit("strata-branch", { name: b.name })}>
          <title>${b.name}: ${b.origin}${b.originEvent !== null ? ` at event ${b.originEvent}` : ""}, head ${b.head} (${b.events} events)</title>
          <line x1=${x(from)} x2=${x(b.events)} y1=${y} y2=${y} stroke=${current ? "#5fb3ff" : b.origin === "rewind" ? "#444c56" : "#7d8794"} stroke-width="3" stroke-dasharray=${b.origin === "rewind" ? "4 3" : "none"}></line>
          ${b.originDepth !== null ? svg`<circle cx=${x(from)} cy=${y} r="3" fill="#d29922"></circle>` : nothing}
          <text x=${x(from) + 4} y=${y - 4}>${visible(b.name)}</text>
        </g>`;
      })}
    </svg></div>`;
  }
}
customElements.define("strata-branches", Branches);
