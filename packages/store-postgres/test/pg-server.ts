/**
 * A real, private PostgreSQL server for the tests — never a mock. `startPgServer` creates a fresh
 * cluster in a temporary directory (`initdb`, trust authentication, superuser `strata`), starts it
 * on a free port of 127.0.0.1 with its Unix socket in that directory, and returns its URL;
 * `stop()` shuts it down and removes the directory. A process that exits without calling `stop()`
 * (an aborted run) still kills its servers on the way out.
 *
 * The binaries are `STRATA_PG_BIN` when set, else the newest `/usr/lib/postgresql/<version>/bin`
 * (Debian's postgresql), else `initdb` on PATH. PostgreSQL refuses to run as root, so as root
 * (CI) `initdb` and `pg_ctl` run as the `postgres` user (`runuser -u postgres --`), which owns the
 * directory. fsync stays on, since the benchmarks measure durable commits; `STRATA_PG_FSYNC=off`
 * turns it off for speed.
 *
 * Node built-ins only: no driver is needed to start a server.
 */
import { execFile, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** A running private server. */
export interface PgServer {
  /** `postgres://strata@127.0.0.1:PORT/postgres`: the superuser, trusted over TCP. */
  readonly url: string;
  readonly port: number;
  /** The cluster's data directory (removed by `stop()`). */
  readonly dataDir: string;
  /** Shuts the server down (fast mode, waiting for it) and removes its directory. */
  stop(): Promise<void>;
}

export interface PgServerOptions {
  /** Progress lines (the cluster, the port, the time taken); nothing is printed without it. */
  readonly log?: (line: string) => void;
}

/** An expected failure (PostgreSQL missing, a server that will not start): its message says it all, with no stack. */
export class PgServerError extends Error {
  override readonly name = "PgServerError";
  constructor(message: string) {
    super(message);
    this.stack = `${this.name}: ${message}`;
  }
}

const INSTALL =
  "Install PostgreSQL's server binaries: on Debian/Ubuntu `apt-get install -y postgresql` (as root; `.ci/run` does it in CI), " +
  "or point STRATA_PG_BIN at a directory holding initdb, pg_ctl and postgres.";

/** The directory of the PostgreSQL binaries (initdb, pg_ctl, postgres, psql). */
export function findPgBin(): string {
  const given = process.env.STRATA_PG_BIN;
  if (given) {
    if (!existsSync(join(given, "initdb"))) throw new PgServerError(`STRATA_PG_BIN is ${given}, which has no initdb. ${INSTALL}`);
    return given;
  }
  const debian = "/usr/lib/postgresql";
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((v) => existsSync(join(debian, v, "bin", "initdb")))
        .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a) || b.localeCompare(a))
    : [];
  if (versions[0] !== undefined) return join(debian, versions[0], "bin");
  for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir && existsSync(join(dir, "initdb"))) return dir;
  throw new PgServerError(`PostgreSQL is not installed: no ${debian}/*/bin/initdb and no initdb on PATH. ${INSTALL}`);
}

interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** The `postgres` user's ids, for running the server when this process is root. */
function postgresUser(): Owner {
  const id = (flag: string): number | undefined => {
    const r = spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
    const n = Number(r.stdout?.trim());
    return r.status === 0 && Number.isInteger(n) ? n : undefined;
  };
  let uid = id("-u");
  let gid = id("-g");
  if (uid === undefined || gid === undefined) {
    // No `id` (a minimal image): the passwd file says the same.
    const line = existsSync("/etc/passwd")
      ? readFileSync("/etc/passwd", "utf8")
          .split("\n")
          .find((l) => l.startsWith("postgres:"))
      : undefined;
    const [, , u, g] = line?.split(":") ?? [];
    uid = u === undefined ? undefined : Number(u);
    gid = g === undefined ? undefined : Number(g);
  }
  if (uid === undefined || gid === undefined || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new PgServerError(
      "PostgreSQL refuses to run as root, and this machine has no `postgres` user to run it as. " +
        "Installing Debian's postgresql creates the user (`apt-get install -y postgresql`; `.ci/run` does it), or run the tests as a normal user.",
    );
  }
  return { uid, gid };
}

/** The last `n` lines of `text`, indented, for an error message. */
function tail(text: string, n = 20): string {
  const lines = text.trimEnd().split("\n").slice(-n);
  return lines.map((l) => `    ${l}`).join("\n");
}

/** Runs one of the PostgreSQL programs (as `postgres` when `asPostgres`), resolving with its output. */
function run(bin: string, program: string, args: readonly string[], cwd: string, asPostgres: boolean, timeout: number): Promise<string> {
  const file = asPostgres ? "runuser" : join(bin, program);
  const argv = asPostgres ? ["-u", "postgres", "--", join(bin, program), ...args] : [...args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { cwd, timeout, encoding: "utf8", env: { ...process.env, LC_ALL: "C" } }, (err, stdout, stderr) => {
      if (err === null) return resolve(stdout);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT")
        return reject(
          new PgServerError(`cannot run ${file}: not found. ${asPostgres ? "runuser (util-linux) is needed as root." : INSTALL}`),
        );
      const why = err.killed ? `timed out after ${timeout / 1000} s` : `exited with ${code ?? err.signal}`;
      const output = `${stdout}${stderr}`.trim();
      reject(new PgServerError(`${program} ${why}${output ? `:\n${tail(output)}` : ""}`));
    });
  });
}

/** A port of 127.0.0.1 that was free a moment ago (the OS picks it; the caller retries if it is taken meanwhile). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new PgServerError("could not find a free port on 127.0.0.1"))));
    });
  });
}

/** `s` quoted for the shell that `pg_ctl` starts the server with. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The postmaster's pid, from its lock file; undefined when it is not running (or never started). */
function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Synchronously asks the postmaster to quit immediately (SIGQUIT); its backends follow. */
function killPostmaster(dataDir: string): void {
  const pid = postmasterPid(dataDir);
  if (pid === undefined) return;
  try {
    process.kill(pid, "SIGQUIT");
  } catch {
    // Already gone.
  }
}

/** The servers of this process that are not stopped yet: killed, and their directories removed, when it exits. */
const live = new Map<string, string>();
let exitHook = false;
function killLive(): void {
  for (const [dataDir, root] of live) {
    killPostmaster(dataDir);
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A backend still writing: the directory is in the system's temp directory.
    }
  }
  live.clear();
}

function size(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}

/** Starts a private PostgreSQL server (see the module comment). */
export async function startPgServer(options: PgServerOptions = {}): Promise<PgServer> {
  const log = options.log ?? (() => {});
  const bin = findPgBin();
  const asPostgres = process.getuid?.() === 0;
  const owner = asPostgres ? postgresUser() : undefined;
  const began = performance.now();
  const root = mkdtempSync(join(tmpdir(), "strata-pg-"));
  const dataDir = join(root, "data");
  const sockDir = join(root, "sock");
  const logFile = join(dataDir, "server.log");
  const fsync = process.env.STRATA_PG_FSYNC === "off" ? "off" : "on";
  live.set(dataDir, root);
  if (!exitHook) process.on("exit", killLive);
  exitHook = true;
  try {
    mkdirSync(sockDir, { mode: 0o700 });
    if (owner !== undefined) for (const d of [root, sockDir]) chownSync(d, owner.uid, owner.gid);
    await run(
      bin,
      "initdb",
      ["-D", dataDir, "-A", "trust", "-U", "strata", "--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"],
      root,
      asPostgres,
      120_000,
    );
    const initialized = performance.now();
    log(`initdb ${dataDir} (${bin}) in ${Math.round(initialized - began)} ms`);

    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const from = size(logFile);
      const serverOptions = [
        ...["-h", "127.0.0.1", "-p", String(port), "-k", shellQuote(sockDir)],
        ...["-c", `fsync=${fsync}`, "-c", "max_connections=200", "-c", "shared_buffers=128MB"],
      ].join(" ");
      try {
        await run(bin, "pg_ctl", ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", serverOptions], root, asPostgres, 90_000);
        break;
      } catch (e) {
        killPostmaster(dataDir);
        const serverLog = existsSync(logFile) ? readFileSync(logFile, "utf8").slice(from) : "";
        const taken = /could not bind|Address already in use/i.test(serverLog);
        if (taken && attempt <= 3) {
          log(`port ${port} was taken meanwhile; trying another`);
          continue;
        }
        const why = e instanceof Error ? e.message : String(e);
        throw new PgServerError(
          `PostgreSQL did not start on 127.0.0.1:${port}: ${why}${serverLog.trim() ? `\n  the end of its server.log:\n${tail(serverLog)}` : ""}`,
        );
      }
    }
    log(`PostgreSQL on 127.0.0.1:${port}, fsync=${fsync}, started in ${Math.round(performance.now() - initialized)} ms`);

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        try {
          await run(bin, "pg_ctl", ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "60"], root, asPostgres, 90_000);
        } catch (e) {
          killPostmaster(dataDir);
          throw e;
        } finally {
          live.delete(dataDir);
          rmSync(root, { recursive: true, force: true, maxRetries: 3 });
        }
      })());
    return { url: `postgres://strata@127.0.0.1:${port}/postgres`, port, dataDir, stop };
  } catch (e) {
    live.delete(dataDir);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    throw e;
  }
}
