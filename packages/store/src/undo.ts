/**
 * Caches that roll back with their transaction (ST-12, decision 0010). A backend keeps in-memory
 * caches of what its file holds (branch tips, segment ancestry, directory chunks); a change made
 * inside a transaction is recorded here, and a rollback — of the transaction, of a nested one, or
 * one the database forces (a full disk) — replays the records backwards. Otherwise a cache entry
 * of a rolled-back row would outlive it, and the database may hand its id to the next row.
 */
export class UndoLog {
  readonly #undo: (() => void)[] = [];
  #depth = 0;

  /**
   * Runs `tx` — which runs its argument in one database transaction (a savepoint when nested) —
   * and, if it throws, undoes the cache changes made inside it before rethrowing.
   */
  run<T>(tx: () => T): T {
    const mark = this.#undo.length;
    this.#depth++;
    try {
      return tx();
    } catch (e) {
      while (this.#undo.length > mark) (this.#undo.pop() as () => void)();
      throw e;
    } finally {
      if (--this.#depth === 0) this.#undo.length = 0;
    }
  }

  /** Sets (or, with undefined, forgets) a cache entry, undoably inside a transaction. */
  set<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
    if (this.#depth > 0) {
      const before = map.get(key);
      this.#undo.push(() => (before === undefined ? map.delete(key) : map.set(key, before)));
    }
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }

  /** Adds a cache entry for an immutable fact (a segment, a chunk), undoably inside a transaction. */
  remember<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (map.has(key)) return;
    if (this.#depth > 0) this.#undo.push(() => map.delete(key));
    map.set(key, value);
  }
}
