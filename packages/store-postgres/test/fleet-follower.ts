/**
 * The inspector of the fleet test (fleet.test.ts), in a process of its own: follows `main` of every
 * session named, from its genesis, and prints `SESSION EVENT` for every event it is given, in the
 * order given (and `moved SESSION` if a branch were moved). Prints `ready` once every follower
 * listens. Stops on SIGTERM.
 * Usage: fleet-follower.ts URL SCHEMA GENESIS_ID:SESSION…
 */
import type { EventId, SessionId } from "@strata/store";
import { openPgStore } from "../src/index.ts";

const [url, schema, ...targets] = process.argv.slice(2) as [string, string, ...string[]];
const store = await openPgStore(url, { schema, max: 4 });
const followers = targets.map((t) => {
  const [genesis, session] = t.split(":") as [string, string];
  return store.follow(
    session as SessionId,
    "main",
    (u) => {
      if (u.kind === "moved") process.stdout.write(`moved ${session}\n`);
      else process.stdout.write(`${u.events.map((e) => `${session} ${e.id}`).join("\n")}\n`);
    },
    { after: Number(genesis) as EventId, pollMs: 250 },
  );
});
await Promise.all(followers.map((f) => f.ready));
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  void Promise.all(followers.map((f) => f.close())).then(() => store.close().then(() => process.exit(0)));
});
