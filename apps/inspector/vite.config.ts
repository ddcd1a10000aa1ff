import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The web app lives in web/; the build goes to app/, which `strata serve` serves (dist/ is the compiled server).
export default defineConfig({
  root: fileURLToPath(new URL("./web", import.meta.url)),
  base: "./",
  build: { outDir: fileURLToPath(new URL("./app", import.meta.url)), emptyOutDir: true, sourcemap: false, target: "es2022" },
  logLevel: "warn",
});
