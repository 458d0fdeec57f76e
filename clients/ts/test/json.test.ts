// Input conversion and JSON helpers, without a server.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Code, ConnectError, toAttributes, toJsonObject } from "@wfd/client";

test("plain JSON objects pass, undefined properties are left out", () => {
  const d = new Date("2026-01-02T03:04:05Z");
  assert.deepEqual(toJsonObject("input", { a: 1, b: "x", c: [true, null, { d: 2.5 }], e: undefined, when: d }), {
    a: 1,
    b: "x",
    c: [true, null, { d: 2.5 }],
    when: "2026-01-02T03:04:05.000Z",
  });
  assert.deepEqual(toJsonObject("input", undefined), {});
  assert.deepEqual(toJsonObject("input", null), {});
  assert.deepEqual(toJsonObject("input", Object.create(null)), {});
});

test("values JSON cannot hold are InvalidArgument with their path", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic["self"] = cyclic;
  const cases: [unknown, RegExp][] = [
    [{ n: NaN }, /input\.n: NaN is not a JSON number/],
    [{ n: Infinity }, /input\.n: Infinity/],
    [{ b: 1n }, /input\.b: a bigint/],
    [{ f: () => 1 }, /input\.f: a function/],
    [{ s: Symbol("x") }, /input\.s: a symbol/],
    [{ l: [1, undefined] }, /input\.l\[1\]: undefined/],
    [{ m: new Map() }, /input\.m: a Map is not a plain object/],
    [cyclic, /input\.self: cyclic/],
    [[1, 2], /input must be a JSON object, not an array/],
    ["text", /input must be a JSON object, not a string/],
  ];
  for (const [v, re] of cases) {
    assert.throws(
      () => toJsonObject("input", v),
      (e: unknown) => e instanceof ConnectError && e.code === Code.InvalidArgument && re.test(e.rawMessage),
      String(re),
    );
  }
});

test("a shared (not cyclic) object is fine", () => {
  const shared = { k: 1 };
  assert.deepEqual(toJsonObject("input", { a: shared, b: shared }), { a: { k: 1 }, b: { k: 1 } });
});

test("search attributes: Dates as RFC 3339, nulls kept, none is undefined", () => {
  const due = new Date("2026-07-01T09:30:00+02:00");
  assert.deepEqual(toAttributes("attributes", { customer: "acme", amount: 3, tags: ["a", "b"], due, gone: null, skip: undefined }), {
    customer: "acme",
    amount: 3,
    tags: ["a", "b"],
    due: "2026-07-01T07:30:00.000Z",
    gone: null,
  });
  assert.equal(toAttributes("attributes", undefined), undefined);
  for (const [v, re] of [
    [{ due: new Date(NaN) }, /attributes\.due: an invalid Date/],
    [{ n: NaN }, /attributes\.n: NaN/],
    [[1], /must be an object/],
  ] as const) {
    assert.throws(
      () => toAttributes("attributes", v as never),
      (e: unknown) => e instanceof ConnectError && e.code === Code.InvalidArgument && re.test(e.rawMessage),
    );
  }
});
