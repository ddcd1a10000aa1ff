/**
 * Which attributes refer to blobs (EN-33). A session stores large or shared texts — templates,
 * context files, the roster's descriptions and schemas, full tool outputs, re-run overrides, the
 * parts of each request sent — as content-addressed blobs and names them by sha256 in an attribute.
 * `BLOB_REFS` lists those attributes per element: a session that has such an attribute must have
 * its blob (bundles refuse to import without it). Other attributes may hold hashes of things that
 * are not blobs (`<request hash>`, `chain`); code that adds a blob-naming attribute adds it here.
 */
import { attrsWritten, type NodeSpec, type Op, type Tree, walkTree } from "@strata/dom";

/** tag → the attributes of that element whose value names a blob. */
export const BLOB_REFS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  template: Object.freeze(["hash"]),
  file: Object.freeze(["hash"]),
  tool: Object.freeze(["description", "schema"]),
  diag: Object.freeze(["hash"]),
  override: Object.freeze(["hash"]),
  request: Object.freeze(["system", "tools", "settings"]),
});

/** Every attribute name that refers to a blob on some element. */
export const BLOB_REF_ATTRS: ReadonlySet<string> = new Set(Object.values(BLOB_REFS).flat());

const SHA256 = /^[0-9a-f]{64}$/;

/** True for a sha256 in the API's form: 64 lowercase hex characters. */
export function isSha256(v: unknown): v is string {
  return typeof v === "string" && SHA256.test(v);
}

/** True when attribute `attr` of a `tag` element with this value names a blob. */
export function isBlobRef(tag: string, attr: string, value: unknown): value is string {
  return isSha256(value) && Object.hasOwn(BLOB_REFS, tag) && (BLOB_REFS[tag] as readonly string[]).includes(attr);
}

/**
 * Calls `found(hash, ref)` for every sha256 attribute value in the spec and its children
 * (iteratively: specs may nest deeply); `ref` is true when the attribute refers to a blob.
 */
export function specHashes(spec: NodeSpec, found: (hash: string, ref: boolean) => void): void {
  const stack: NodeSpec[] = [spec];
  for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
    if (s.attrs !== undefined)
      for (const [name, value] of Object.entries(s.attrs)) if (isSha256(value)) found(value, isBlobRef(s.tag, name, value));
    if (s.children !== undefined) for (const c of s.children) stack.push(c);
  }
}

/**
 * Calls `found` with every sha256 attribute value the ops write (inserted specs, `set` values; the
 * dom says what each op kind writes): the blobs an event may name, whatever the element (the tags
 * of `set` targets are in the tree).
 */
export function opsHashes(ops: readonly Op[], found: (hash: string) => void): void {
  const visit = (_tag: string | undefined, _name: string, value: string): void => {
    if (isSha256(value)) found(value);
  };
  for (const op of ops) attrsWritten(op, visit);
}

/** The blobs the tree's elements refer to (EN-33). */
export function treeBlobRefs(tree: Tree): Set<string> {
  const out = new Set<string>();
  walkTree(tree, tree.rootId, (r) => {
    const attrs = BLOB_REFS[r.tag];
    if (attrs !== undefined && Object.hasOwn(BLOB_REFS, r.tag))
      for (const name of attrs) if (isSha256(r.attrs[name])) out.add(r.attrs[name] as string);
  });
  return out;
}
