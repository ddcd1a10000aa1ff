/**
 * Generators for the selector differential (DOM-37): small random trees written as XML, and random
 * selectors over the same vocabulary, each in strata's syntax and in the standard syntax a browser
 * reads (`[a!=v]` → `:not([a="v"])`). Every selector generated is valid Selectors Level 4 that
 * Chromium supports; the vocabulary is small so that selectors often match.
 */
import fc from "fast-check";

export const TAGS = ["a", "b", "c", "A"] as const;
export const ATTRS = ["x", "y", "id", "class"] as const;
/** Attribute values in trees: white space, hyphens, case, non-ASCII, quotes, TAB. */
export const VALUES = ["", "v", "w", "v w", " v ", "v-w", "V", "vw", "w-v", "é", "É", 'q"t', "a\tb", "-"] as const;
/** Values in selectors. */
const WANTED = ["", "v", "w", "V", "v-w", "v w", "é", "É", 'q"t', "-", "vw", "x"] as const;

export interface GenNode {
  readonly tag: string;
  readonly attrs: ReadonlyArray<readonly [string, string]>;
  readonly text: string;
  readonly children: readonly GenNode[];
}

const escapeXml = (s: string): string =>
  s.replace(
    /[&<>"\t\n\r]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;" })[c] as string,
  );

/** The XML of a generated tree (no ids: parseXml numbers elements 1, 2, … in document order). */
export function toXmlString(root: GenNode): string {
  let out = "";
  const stack: Array<GenNode | string> = [root];
  while (stack.length > 0) {
    const n = stack.pop() as GenNode | string;
    if (typeof n === "string") {
      out += n;
      continue;
    }
    out += `<${n.tag}${n.attrs.map(([k, v]) => ` ${k}="${escapeXml(v)}"`).join("")}`;
    if (n.children.length > 0) {
      out += ">";
      stack.push(`</${n.tag}>`);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as GenNode);
    } else if (n.text !== "") out += `>${escapeXml(n.text)}</${n.tag}>`;
    else out += "/>";
  }
  return out;
}

const attrsArb = fc.uniqueArray(fc.tuple(fc.constantFrom(...ATTRS), fc.constantFrom(...VALUES)), {
  maxLength: 3,
  selector: (p) => p[0],
});

/**
 * A tree of 1 to 30 elements: element i (in creation order) hangs under an earlier one, so shapes
 * range from chains to wide parents; elements left without children may carry text (" " included).
 */
export const treeArb: fc.Arbitrary<GenNode> = fc
  .array(
    fc.record({
      parent: fc.nat(),
      tag: fc.constantFrom(...TAGS),
      attrs: attrsArb,
      text: fc.constantFrom("", "", "", " ", "t"),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((specs) => {
    const kids: number[][] = specs.map(() => []);
    for (let i = 1; i < specs.length; i++) (kids[(specs[i] as { parent: number }).parent % i] as number[]).push(i);
    const build = (i: number): GenNode => {
      const s = specs[i] as (typeof specs)[number];
      const children = (kids[i] as number[]).map(build);
      return { tag: s.tag, attrs: s.attrs, text: children.length > 0 ? "" : s.text, children };
    };
    return build(0);
  });

/** A selector in both spellings. */
export interface GenSelector {
  readonly strata: string;
  readonly standard: string;
}

const both = (s: string): GenSelector => ({ strata: s, standard: s });
const join = (parts: readonly GenSelector[], sep = ""): GenSelector => ({
  strata: parts.map((p) => p.strata).join(sep),
  standard: parts.map((p) => p.standard).join(sep),
});

const quoted = (v: string, q: '"' | "'"): string => `${q}${v.replace(/\\/g, "\\\\").replace(q === '"' ? /"/g : /'/g, `\\${q}`)}${q}`;
const valueArb: fc.Arbitrary<string> = fc.constantFrom(...WANTED).chain((v) => {
  const forms = [quoted(v, '"'), quoted(v, "'")];
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(v)) forms.push(v);
  return fc.constantFrom(...forms);
});

const attributeArb: fc.Arbitrary<GenSelector> = fc
  .tuple(
    fc.constantFrom(...ATTRS),
    fc.constantFrom("exists", "=", "~=", "|=", "^=", "$=", "*=", "!="),
    valueArb,
    fc.constantFrom("", "", "", " i", " I"),
  )
  .map(([name, op, value, flag]) => {
    if (op === "exists") return both(`[${name}]`);
    if (op === "!=") return { strata: `[${name}!=${value}${flag}]`, standard: `:not([${name}=${value}${flag}])` };
    return both(`[${name}${op}${value}${flag}]`);
  });

const FORMULAS = [
  "odd",
  "even",
  "EVEN",
  "1",
  "2",
  "3",
  "-1",
  "0",
  "n",
  "+n",
  "-n",
  "-n+2",
  "2n+1",
  "2n",
  "3n-1",
  "-2n+3",
  " 2n + 1 ",
  "n- 1",
  "-n-1",
  "+3",
];

const simplePseudo = fc.constantFrom(
  ":empty",
  ":first-child",
  ":last-child",
  ":only-child",
  ":first-of-type",
  ":last-of-type",
  ":only-of-type",
  ":root",
  ":FIRST-CHILD",
);

interface Ctx {
  readonly depth: number;
  readonly inHas: boolean;
}

function compoundArb(ctx: Ctx): fc.Arbitrary<GenSelector> {
  const type = fc.constantFrom("", "", "*", ...TAGS);
  const conditions: Array<fc.WeightedArbitrary<GenSelector>> = [
    { arbitrary: attributeArb, weight: 6 },
    { arbitrary: simplePseudo.map(both), weight: 3 },
    {
      arbitrary: fc
        .constantFrom(...FORMULAS)
        .chain((f) => fc.constantFrom(":nth-child", ":nth-last-child", ":nth-of-type", ":nth-last-of-type").map((p) => both(`${p}(${f})`))),
      weight: 3,
    },
    { arbitrary: fc.constantFrom("#v", "#w", ".v", ".w", ".V").map(both), weight: 1 },
  ];
  if (!ctx.inHas) conditions.push({ arbitrary: fc.constant(both(":scope")), weight: 1 });
  if (ctx.depth < 2) {
    const inner: Ctx = { depth: ctx.depth + 1, inHas: ctx.inHas };
    const list = listArb(inner);
    const weight = ctx.depth === 0 ? 2 : 1;
    conditions.push(
      { arbitrary: list.map((l) => join([both(":not("), l, both(")")])), weight },
      { arbitrary: fc.tuple(fc.constantFrom(":is(", ":where("), list).map(([p, l]) => join([both(p), l, both(")")])), weight },
      {
        arbitrary: fc
          .tuple(fc.constantFrom(...FORMULAS), fc.constantFrom(":nth-child(", ":nth-last-child("), list)
          .map(([f, p, l]) => join([both(`${p}${f} of `), l, both(")")])),
        weight,
      },
    );
    if (!ctx.inHas)
      conditions.push({
        arbitrary: relativeListArb({ depth: ctx.depth + 1, inHas: true }).map((l) => join([both(":has("), l, both(")")])),
        weight: 2 * weight,
      });
  }
  const count = fc.constantFrom(0, 0, 1, 1, 1, 2);
  return fc
    .tuple(
      type,
      count.chain((k) => fc.array(fc.oneof(...conditions), { minLength: k, maxLength: k })),
    )
    .map(([t, conds]) => {
      const c = join([both(t), ...conds]);
      return c.strata === "" ? both("*") : c;
    });
}

const combinatorArb = fc.constantFrom(" ", " > ", ">", " + ", "~", " ~ ");

function complexArb(ctx: Ctx): fc.Arbitrary<GenSelector> {
  const more = ctx.depth === 0 ? fc.constantFrom(0, 0, 1, 1, 2) : fc.constantFrom(0, 0, 1);
  return fc
    .tuple(
      compoundArb(ctx),
      more.chain((k) => fc.array(fc.tuple(combinatorArb, compoundArb(ctx)), { minLength: k, maxLength: k })),
    )
    .map(([first, rest]) => join([first, ...rest.flatMap(([comb, c]) => [both(comb), c])]));
}

function listArb(ctx: Ctx): fc.Arbitrary<GenSelector> {
  return fc.constantFrom(1, 1, 1, 2).chain((k) => fc.array(complexArb(ctx), { minLength: k, maxLength: k }).map((l) => join(l, ", ")));
}

function relativeListArb(ctx: Ctx): fc.Arbitrary<GenSelector> {
  const relative = fc.tuple(fc.constantFrom("", "> ", "+ ", "~ ", ">"), complexArb(ctx)).map(([lead, c]) => join([both(lead), c]));
  return fc.constantFrom(1, 1, 1, 2).chain((k) => fc.array(relative, { minLength: k, maxLength: k }).map((l) => join(l, ", ")));
}

/** A top-level selector list. */
export const selectorArb: fc.Arbitrary<GenSelector> = listArb({ depth: 0, inHas: false });
