/**
 * The conversation view's component registry (IN-26, "rendering is a projection"): one renderer
 * per element tag, each a pure function of the element as the tree answers it (`NodeJson`) and a
 * small context. An element whose tag has no renderer goes to the fallback, which shows it —
 * tag, attributes, text, children — so nothing in a session is ever dropped from the view.
 *
 *   const registry = new Registry(generic).register("turn", turn).register("call", call);
 *   registry.render(element, context);
 *
 * Renderers render their children through `context.element` / `context.children`, so a child's
 * tag picks its own renderer wherever it appears. Everything they show of a session goes through
 * Lit's text bindings (IN-16).
 */
import type { TemplateResult } from "lit";
import type { CallEffects, NodeJson } from "../../src/protocol.ts";

/** What a renderer may use besides its element: the answer it came in, and the view's helpers. */
export interface RenderContext {
  /** The event the conversation is shown at. */
  readonly event: number;
  /** What the log says of each call shown, by call element id (IN-27). */
  readonly calls: Readonly<Record<string, CallEffects>>;
  readonly session: string;
  readonly branch: string;
  /** `n` by the renderer of its tag. */
  element(n: NodeJson): TemplateResult;
  /** `n`'s children (those `keep` accepts), each by its renderer; a skipped run is a button that fetches it. */
  children(n: NodeJson, keep?: (child: NodeJson) => boolean): TemplateResult[];
  /** `n`'s text as text (control characters made visible), with a button for the rest when the window cut it. */
  text(n: NodeJson): TemplateResult;
  /** A link to `n` in the tree view (its id). */
  ref(n: NodeJson): TemplateResult;
  /** A link that selects the event at `depth` in the timeline. */
  eventLink(event: { readonly id: number; readonly depth: number; readonly label: string | null }): TemplateResult;
}

/** Renders one element (and, through the context, its children). */
export type Renderer = (n: NodeJson, ctx: RenderContext) => TemplateResult;

/** Renderers by tag, and the fallback for every other tag. */
export class Registry {
  // A Map, not an object: a tag is session data (`__proto__`, `constructor` are tags like any other).
  readonly #byTag = new Map<string, Renderer>();

  constructor(private readonly fallback: Renderer) {}

  /** Adds the renderer of `tag`; throws when the tag has one already (one renderer per tag). */
  register(tag: string, renderer: Renderer): this {
    if (this.#byTag.has(tag)) throw new Error(`the conversation view has a renderer for <${tag}> already`);
    this.#byTag.set(tag, renderer);
    return this;
  }

  /** Adds every renderer of `table`, by its key. */
  registerAll(table: Readonly<Record<string, Renderer>>): this {
    for (const [tag, renderer] of Object.entries(table)) this.register(tag, renderer);
    return this;
  }

  /** The renderer `tag` gets: its own, or the fallback. */
  rendererOf(tag: string): Renderer {
    return this.#byTag.get(tag) ?? this.fallback;
  }

  /** True when `tag` has a renderer of its own. */
  has(tag: string): boolean {
    return this.#byTag.has(tag);
  }

  render(n: NodeJson, ctx: RenderContext): TemplateResult {
    return this.rendererOf(n.tag)(n, ctx);
  }
}
