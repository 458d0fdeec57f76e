import { fileURLToPath } from "node:url";

import { defineConfig } from "vite";

// The console is served by wfd at /ui/ (package console embeds dist/).
// @wfd/client is compiled from its TypeScript source in clients/ts; its
// own imports resolve to this package's node_modules (dedupe), so the
// client needs no install or build of its own.
export default defineConfig({
  base: "/ui/",
  resolve: {
    alias: {
      "@wfd/client/web": fileURLToPath(new URL("../clients/ts/src/web.ts", import.meta.url)),
    },
    dedupe: ["@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-web", "uuid"],
  },
  // `npx vite` serves the sources with hot reload and passes the API calls
  // to a running wfd's console port (WFD_CONSOLE, default 127.0.0.1:7234).
  server: {
    proxy: {
      "/wfd.v1.WorkflowService": { target: process.env.WFD_CONSOLE ?? "http://127.0.0.1:7234", changeOrigin: true },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    reportCompressedSize: false,
    rolldownOptions: {
      onwarn(warning, warn) {
        // rjsf marks its hooks "use client" (for React Server Components): meaningless here.
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") {
          return;
        }
        warn(warning);
      },
    },
  },
});
