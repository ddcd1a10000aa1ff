/**
 * The closed op set of `patch@1` (DESIGN §3): one entry per kind, each a module of its own. This
 * is the one place that lists the kinds; everything that needs to know what an op does asks its
 * entry (`opDef`), so adding a kind is a module here plus one line in each list below.
 */
import { type AppendOp, append } from "./append.ts";
import { type InsOp, ins } from "./ins.ts";
import type { OpDef } from "./kind.ts";
import { type MvOp, mv } from "./mv.ts";
import { type RmOp, rm } from "./rm.ts";
import { type SetOp, set } from "./set.ts";
import { type TextOp, text } from "./text.ts";

/** One op: a JSON array whose first element names its kind. */
export type Op = InsOp | RmOp | SetOp | MvOp | TextOp | AppendOp;
export type OpKind = Op[0];
/** An ordered list of ops, applied all or nothing. */
export type Patch = readonly Op[];

/** The op of kind `K`. */
export type OpOf<K extends OpKind> = Extract<Op, readonly [K, ...unknown[]]>;

/** Every kind, in the order DESIGN §3 lists them. The mapped type makes a missing entry a type error. */
const DEFS: { readonly [K in OpKind]: OpDef<OpOf<K>> } = Object.freeze({ ins, rm, set, mv, text, append });

/** The op kinds of `patch@1`, in the order DESIGN §3 lists them. */
export const OP_KINDS: readonly OpKind[] = Object.freeze(Object.keys(DEFS) as OpKind[]);

/** The definition of `op`'s kind (`op` must be an op: checked, or typed). */
export function opDef<O extends Op>(op: O): OpDef<O> {
  return DEFS[op[0]] as unknown as OpDef<O>;
}

/** The definition of kind `kind`, or `undefined` when `patch@1` has no such kind. */
export function kindDef(kind: unknown): OpDef<Op> | undefined {
  return typeof kind === "string" && Object.hasOwn(DEFS, kind) ? (DEFS[kind as OpKind] as unknown as OpDef<Op>) : undefined;
}
