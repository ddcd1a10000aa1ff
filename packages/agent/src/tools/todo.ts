/**
 * The `todo` tool (TL-15): rewrites `<meta><todo>` from a full list — the pattern that survives
 * rewind, because the list is state in the tree. The change is staged: it is committed with the
 * call's outcome, and dropped if the call does not end in `executed`.
 */
import type { NodeId } from "@strata/dom";
import { metaOf } from "@strata/engine";
import { META } from "../vocabulary.ts";
import type { ToolSpec } from "./registry.ts";

/** The statuses of a todo item (`<item status>`), which the default system template reads. */
export const TODO_STATUSES = ["pending", "in_progress", "completed"] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

/** `todo`: needs a session to stage its change in (`ctx.stage`). Replay policy `safe`. */
export function createTodoTool(): ToolSpec {
  return {
    name: "todo",
    description: "Replace the whole todo list. Send every item each time, with its status (pending, in_progress or completed).",
    parameters: {
      type: "object",
      properties: {
        items: {
          type: "array",
          maxItems: 200,
          items: {
            type: "object",
            properties: { text: { type: "string", minLength: 1, maxLength: 2000 }, status: { enum: [...TODO_STATUSES] } },
            required: ["text", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["items"],
      additionalProperties: false,
    },
    replayPolicy: "safe",
    handler: async (args, ctx) => {
      const items = args.items as { text: string; status: TodoStatus }[];
      if (ctx.stage === undefined) throw new Error("the todo tool needs a session to write to (ctx.stage)");
      ctx.stage((d) => {
        const meta = metaOf(d.tree);
        const existing = meta.children.find((c) => c.tag === META.todo);
        if (existing !== undefined) d.remove(existing.id as NodeId);
        d.appendChild(meta.id, {
          tag: META.todo,
          children: items.map((i) => ({ tag: META.item, attrs: { status: i.status }, text: i.text })),
        });
      });
      const n = (s: TodoStatus): number => items.filter((i) => i.status === s).length;
      return `todo list updated: ${items.length} items (${n("completed")} completed, ${n("in_progress")} in progress, ${n("pending")} pending)`;
    },
  };
}
