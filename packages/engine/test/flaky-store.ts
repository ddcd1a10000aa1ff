/** Test helper: a store whose chosen methods fail with `disk-full` while `broken.on` (a full disk). */
import { type Store, StoreError } from "@strata/store";

/** A store whose writes fail while `broken.on` (a full disk). */
export function flakyStore(real: Store, methods: readonly string[]): { store: Store; broken: { on: boolean } } {
  const broken = { on: false };
  const store = new Proxy(
    {},
    {
      get(_, k) {
        if (broken.on && methods.includes(String(k)))
          return () => {
            throw new StoreError("disk-full", "simulated: the disk is full");
          };
        const v = (real as unknown as Record<string | symbol, unknown>)[k];
        return typeof v === "function" ? v.bind(real) : v;
      },
    },
  ) as Store;
  return { store, broken };
}
