import { ModelError } from "@strata/agent/model";

/** Waits `ms`, or rejects with a `cancelled` ModelError as soon as `signal` aborts. */
export function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ModelError("cancelled", "the request was cancelled"));
    if (ms <= 0) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ModelError("cancelled", "the request was cancelled"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
