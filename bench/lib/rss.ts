/**
 * The peak resident memory of this process, in KiB. Not `process.resourceUsage().maxRSS`: on Linux
 * a spawned child's `maxRSS` starts from its parent's RSS at the fork (the kernel keeps the larger
 * of the old and new address spaces' peaks across `exec`), so a probe started by a 300 MB bench
 * reports at least 300 MB whatever it does itself. `VmHWM` in /proc/self/status is the peak of
 * this process's own address space, which starts at zero at `exec`. Elsewhere than Linux,
 * `maxRSS` is all there is.
 */
import { readFileSync } from "node:fs";

export function peakRssKb(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m !== null) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}
