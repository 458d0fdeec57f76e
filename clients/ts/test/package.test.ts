// npm pack ships the compiled JS and the types behind every export.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { pkgDir } from "./helpers.js";

test("npm pack holds dist/ with JS and .d.ts for every export", () => {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const [info] = JSON.parse(out) as { files: { path: string }[]; filename: string }[];
  const files = new Set(info!.files.map((f) => f.path));
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
    exports: Record<string, string | { types: string; default: string }>;
  };
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string" || key.includes("*")) continue;
    for (const f of [target.types, target.default]) {
      assert.ok(files.has(f.replace(/^\.\//, "")), `${key}: ${f} not packed`);
    }
  }
  for (const f of ["dist/gen/wfd/v1/service_pb.js", "dist/gen/wfd/v1/service_pb.d.ts", "README.md", "package.json"]) {
    assert.ok(files.has(f), `${f} not packed`);
  }
  assert.ok(![...files].some((f) => f.startsWith("test/") || f.startsWith("build/") || f.startsWith("node_modules/")));
  assert.match(info!.filename, /^wfd-client-\d+\.\d+\.\d+\.tgz$/);
});
