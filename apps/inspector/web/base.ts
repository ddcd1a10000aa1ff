/**
 * What every view element shares: light DOM (one stylesheet, styles.css; the CSP forbids inline
 * styles), style properties set through the CSSOM, and how a view reports to its container.
 */
import { LitElement, noChange } from "lit";
import { Directive, directive, type ElementPart } from "lit/directive.js";

/**
 * Sets style properties through the CSSOM. The CSP forbids inline `style` attributes (and so
 * Lit's styleMap, which writes one on first render); `element.style` is allowed.
 */
class CssDirective extends Directive {
  override update(part: ElementPart, [props]: [Record<string, string>]): typeof noChange {
    const style = (part.element as HTMLElement).style;
    for (const [k, v] of Object.entries(props)) style.setProperty(k, v);
    return noChange;
  }
  override render(_props: Record<string, string>): typeof noChange {
    return noChange;
  }
}
export const css = directive(CssDirective);

/** The events views send their container, by name, with their detail. */
export interface ViewEvents {
  /** The timeline: select the row at this depth index (0-based). */
  "strata-select": { readonly index: number };
  /** The timeline: diff against the row at this index (a shift-click). */
  "strata-base": { readonly index: number };
  /** The branch graph: switch to this branch. */
  "strata-branch": { readonly name: string };
  /** The conversation: show element `id` in the tree. */
  "strata-reveal": { readonly id: number };
  /** A view's own request failed: show this message. */
  "strata-error": { readonly message: string };
}

/** Light DOM everywhere: one stylesheet (styles.css), no inline styles (the CSP forbids them). */
export class Base extends LitElement {
  override createRenderRoot(): HTMLElement {
    return this;
  }

  /** Reports `name` to the container (it bubbles to the element that listens). */
  protected emit<K extends keyof ViewEvents>(name: K, detail: ViewEvents[K]): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true }));
  }
}

/** The detail of a view event, for a container's listener. */
export function eventDetail<K extends keyof ViewEvents>(_name: K, e: Event): ViewEvents[K] {
  return (e as CustomEvent<ViewEvents[K]>).detail;
}
