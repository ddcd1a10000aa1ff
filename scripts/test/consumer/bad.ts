// Must NOT type-check (PK-2): the published types are real, not `any`.
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";

const session = Session.create(openStore(":memory:"), { title: 42 });
session.fork("not an event id", { name: 7 });
