// The server's field errors: wfd names each value that fails a schema as
// "at '<JSON pointer>': what" (internal/schema). No imports but types, so
// the tests run it as it is.
import type { ErrorSchema } from "@rjsf/utils";

/**
 * The failing fields of a schema error. wfd names each failing value as
 * "at '<JSON pointer>': what" (internal/schema); a missing required
 * property is reported at its parent, so it is moved onto the property.
 * The result maps a pointer ("/reason") to its messages; "" is the whole.
 */
export function fieldErrors(message: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /at '([^']*)': (.*?)(?=; at '|; and \d+ more$|$)/g;
  for (const m of message.matchAll(re)) {
    let path = m[1];
    let what = m[2].trim();
    const missing = /^missing propert(?:y|ies) (.+)$/.exec(what);
    if (missing) {
      for (const name of missing[1].split(",").map((s) => s.trim().replace(/^'|'$/g, ""))) {
        push(out, `${path}/${name}`, "is required");
      }
      continue;
    }
    if (path === "" && what.startsWith("additionalProperties")) {
      what = what.replace(/^additionalProperties /, "not allowed: ");
    }
    push(out, path, what);
  }
  return out;
}

function push(m: Map<string, string[]>, k: string, v: string): void {
  const list = m.get(k);
  if (list) {
    list.push(v);
  } else {
    m.set(k, [v]);
  }
}

/** ErrorSchema from "at '<pointer>'" messages: {reason: {__errors: [...]}}. */
export function errorSchema(errs: Map<string, string[]>): ErrorSchema {
  const root: { [k: string]: unknown } = {};
  for (const [ptr, msgs] of errs) {
    let node = root;
    for (const seg of ptr.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))) {
      node = (node[seg] ??= {}) as { [k: string]: unknown };
    }
    node.__errors = [...((node.__errors as string[] | undefined) ?? []), ...msgs];
  }
  return root as ErrorSchema;
}

