/**
 * The inspector web app (IN-10 … IN-16): a session list, and per session a branch graph, a
 * scrubbable timeline of events (virtualized), the tree at the selected event with selector
 * search, a diff between two events, the prompt at the event, and live following of a running
 * session. Every piece of session content goes through Lit text bindings (escaped); nothing is
 * ever inserted as HTML.
 *
 * One element per view (`views/`), each rendering what its properties hold and reporting
 * selection by events (`base.ts`); `<strata-app>` (`shell.ts`) routes between the session list
 * and a session's view, which composes the rest. The server is read through `client.ts`, by
 * the protocol the server's route table implements (`../src/protocol.ts`).
 */
import "./shell.ts";
