// Loaded with --import (PK-3): appends every module URL the process resolves to $STRATA_LOADS.
import { register } from "node:module";

register("./loads-hooks.mjs", import.meta.url);
