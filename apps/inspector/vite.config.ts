import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The web app lives in web/; the build goes to dist/, which `strata serve` serves.
export default defineConfig({
  root: fileURLToPath(new URL("./web", import.meta.url)),
  base: "./",
  build: { outDir: fileURLToPath(new URL("./dist", import.meta.url)), emptyOutDir: true, sourcemap: false, target: "es2022" },
  logLevel: "warn",
});
