/**
 * What `run` and `resume` show while the loop works (CLI-10, CLI-27): the assistant's text as it
 * streams, each call (→) and its outcome, reconciliations after a crash — and, on a terminal,
 * a status line under a running call with its elapsed time and the last line of the output it
 * has streamed so far, rewritten in place until the call settles (so a slow command never looks
 * hung). `--quiet` and `--json` show none of it.
 */

import { type AgentEvent, ATTR, CALL, ROLE, TAG } from "@strata/agent";
import type { NodeId } from "@strata/dom";
import type { Port, Session } from "@strata/engine";
import type { Out } from "./output.ts";
import { oneLine } from "./terminal.ts";

/** How often the status line of a running call is redrawn. */
const TICK_MS = 200;

/** `4.2 s`, `1 min 05 s`. */
export function elapsed(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
}

/** The last non-empty line of `text`. */
function lastLine(text: string): string {
  const lines = text.split(/\r?\n|\r/).filter((l) => l.trim() !== "");
  return lines.at(-1) ?? "";
}

export interface Reporter {
  readonly onEvent: (e: AgentEvent) => void;
  /** Stops the status line (at the end of the run, whatever happened). */
  close(): void;
}

/**
 * What `run`, `resume` and `chat` show while the loop works; `echoUser: false` leaves out the
 * user's message (a chat on a terminal, where it was just typed).
 */
export function reporter(out: Out, session: Session<Port>, live: boolean, options: { echoUser?: boolean } = {}): Reporter {
  if (out.json || out.quiet) return { onEvent: () => {}, close: () => {} };
  let midLine = false;
  let running: { element: NodeId; tool: string; since: number; timer: NodeJS.Timeout } | undefined;
  const end = (): void => {
    if (midLine) out.write("\n");
    midLine = false;
  };
  const stopStatus = (): void => {
    if (running === undefined) return;
    clearInterval(running.timer);
    running = undefined;
    out.progressDone();
  };
  const drawStatus = (): void => {
    if (running === undefined) return;
    const output = session.tree.get(running.element)?.children.find((c) => c.tag === TAG.output)?.text ?? "";
    const tail = lastLine(output);
    out.progress(
      `    ${out.paint("dim", "⋯")} ${running.tool} ${out.paint("yellow", `running ${elapsed(Date.now() - running.since)}`)}${tail === "" ? "" : ` ${out.paint("dim", "│")} ${oneLine(tail, 200)}`}`,
    );
  };
  /** An assistant turn began and nothing of it was shown yet: its label waits for what it says or does. */
  let label = false;
  const onEvent = (e: AgentEvent): void => {
    if (e.type !== "text") stopStatus();
    if (label && e.type !== "turn" && e.type !== "stop") {
      // the turn shows something: its label first (a turn that ends with nothing, a failed request, shows none)
      label = false;
      out.write(`${out.paint("bold", "assistant")}  `);
      midLine = true;
    }
    switch (e.type) {
      case "turn":
        label = false;
        end();
        if (e.role === ROLE.user) {
          if (options.echoUser !== false)
            out.line(`${out.paint("bold", "user")}  ${oneLine(session.durableTree.get(e.element)?.textContent() ?? "", 200)}`);
        } else label = true;
        break;
      case "text":
        out.write(e.delta);
        midLine = !e.delta.endsWith("\n");
        break;
      case "call": {
        if (e.status === CALL.arguments || e.status === CALL.pending) break;
        end();
        const call = session.durableTree.get(e.element);
        if (e.status === CALL.running) {
          const args = call?.children.find((c) => c.tag === TAG.args)?.text ?? "";
          out.line(`  ${out.paint("cyan", "→")} ${out.paint("bold", e.tool)} ${out.paint("dim", oneLine(args, 90))}`);
          if (live) {
            running = { element: e.element, tool: e.tool, since: Date.now(), timer: setInterval(drawStatus, TICK_MS) };
            running.timer.unref();
            drawStatus();
          }
        } else {
          const mark =
            e.status === CALL.executed
              ? call?.attrs[ATTR.error]
                ? out.paint("yellow", "!")
                : out.paint("green", "✓")
              : out.paint("red", "✗");
          out.line(`  ${mark} ${e.tool} ${out.paint("dim", e.status)}  ${oneLine(e.detail ?? "", 90)}`);
        }
        break;
      }
      case "reconcile":
        end();
        if (e.action === "dropped-turn") out.line(out.paint("yellow", "  ↺ the model's last reply was cut off; asking again"));
        else if (e.action === "rerun")
          out.line(out.paint("yellow", `  ↺ ${e.tool} was running when the process stopped; it is safe to repeat, re-running`));
        else if (e.action === "interrupted")
          out.line(out.paint("yellow", `  ↺ ${e.tool} was running when the process stopped; it is not safe to repeat, marked interrupted`));
        else out.line(out.paint("yellow", `  ↺ ${e.tool} was decided but never started; running it now`));
        break;
      case "stop":
        label = false;
        end();
        break;
    }
  };
  return {
    onEvent,
    close() {
      stopStatus();
      end();
    },
  };
}
