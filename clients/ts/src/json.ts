import { toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { HandlerSchema, RecordSchema, TaskSchema, type Handler, type Record, type Task } from "./gen/wfd/v1/handler_pb.js";
import { GetStatsResponseSchema, type GetStatsResponse } from "./gen/wfd/v1/service_pb.js";

export type { JsonObject, JsonValue };

/**
 * Checks that `value` is a JSON object as a google.protobuf.Struct can hold
 * it, and returns a copy. Properties whose value is `undefined` are left
 * out (as `JSON.stringify` does) and objects with a `toJSON` method (a
 * `Date`, say) are replaced by its result; anything else that is not JSON —
 * a function, a symbol, a bigint, `NaN` or an infinite number, an
 * `undefined` array element, a cycle — is a `ConnectError` with
 * `Code.InvalidArgument` naming the path, thrown before any call is made.
 * (protobuf-es itself would quietly turn such values into `null`.)
 *
 * `undefined` or `null` for the whole value is an empty object.
 */
export function toJsonObject(what: string, value: unknown): JsonObject {
  if (value === undefined || value === null) {
    return {};
  }
  const v = toJsonValueAt(value, what, new Set());
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw invalid(`${what} must be a JSON object, not ${describe(value)}`);
  }
  return v;
}

/** A search attribute's value as the client takes it (see {@link SearchAttributes}). */
export type SearchAttributeValue = string | number | boolean | Date | readonly string[] | null;

/**
 * Search attributes by name, as {@link WfdClient.run}'s `attributes`, a
 * `sendOrStart`'s and a worker step's `setAttributes` take them: a string
 * (`string`), a list of strings (`keyword_list`), a whole number within
 * ±(2^53−1) (`int`), a finite number (`double`), a boolean (`bool`), a
 * `Date` or an RFC 3339 string (`time`). `null` deletes the attribute in a
 * step's update and is ignored at start; `undefined` is left out.
 */
export type SearchAttributes = { readonly [name: string]: SearchAttributeValue | undefined };

/**
 * Search attributes as the google.protobuf.Struct the API takes: `Date`s
 * become RFC 3339 strings (UTC, to the millisecond), anything else is
 * checked as {@link toJsonObject} checks it. An invalid `Date` is a
 * `ConnectError` with `Code.InvalidArgument` naming the attribute, thrown
 * before any call. `undefined` stays `undefined` (no attributes).
 */
export function toAttributes(what: string, attrs: SearchAttributes | undefined | null): JsonObject | undefined {
  if (attrs === undefined || attrs === null) {
    return undefined;
  }
  if (typeof attrs !== "object" || Array.isArray(attrs)) {
    throw invalid(`${what} must be an object of attributes by name, not ${describe(attrs)}`);
  }
  const out: { [k: string]: unknown } = {};
  for (const [k, v] of Object.entries(attrs)) {
    if (v instanceof Date) {
      if (Number.isNaN(v.getTime())) {
        throw invalid(`${what}.${k}: an invalid Date`);
      }
      out[k] = v.toISOString();
    } else {
      out[k] = v;
    }
  }
  return toJsonObject(what, out);
}

function toJsonValueAt(value: unknown, path: string, seen: Set<object>): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        throw invalid(`${path}: ${value} is not a JSON number`);
      }
      return value;
    case "object":
      break;
    default:
      throw invalid(`${path}: a ${typeof value} is not a JSON value`);
  }
  if (value === null) {
    return null;
  }
  if (seen.has(value)) {
    throw invalid(`${path}: cyclic value`);
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    return toJsonValueAt(toJSON.call(value), path, seen);
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((el, i) => {
        if (el === undefined) {
          throw invalid(`${path}[${i}]: undefined is not a JSON value`);
        }
        return toJsonValueAt(el, `${path}[${i}]`, seen);
      });
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw invalid(`${path}: ${describe(value)} is not a plain object`);
    }
    const out: JsonObject = {};
    for (const [k, el] of Object.entries(value)) {
      if (el !== undefined) {
        out[k] = toJsonValueAt(el, `${path}.${k}`, seen);
      }
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) {
    return `a ${value.constructor?.name ?? "object"}`;
  }
  return `a ${typeof value}`;
}

function invalid(msg: string): ConnectError {
  return new ConnectError(`client: ${msg}`, Code.InvalidArgument);
}

const jsonOpts = { alwaysEmitImplicit: false, enumAsInteger: false } as const;

/**
 * A handler in the protobuf JSON form (what `wfd get` prints and the
 * Connect protocol's JSON carries): camelCase fields, enum names such as
 * `"HANDLER_STATUS_COMPLETED"`, RFC 3339 timestamps, uint64 as strings.
 */
export function handlerToJson(h: Handler): JsonObject {
  return toJson(HandlerSchema, h, jsonOpts) as JsonObject;
}

/** A stream record in the protobuf JSON form (see {@link handlerToJson}). */
export function recordToJson(r: Record): JsonObject {
  return toJson(RecordSchema, r, jsonOpts) as JsonObject;
}

/** Server statistics in the protobuf JSON form (durations as `"0.002s"`). */
export function statsToJson(s: GetStatsResponse): JsonObject {
  return toJson(GetStatsResponseSchema, s, jsonOpts) as JsonObject;
}

/**
 * A human task in the protobuf JSON form (see {@link handlerToJson}): enum
 * names such as `"TASK_STATUS_PENDING"`, RFC 3339 times, and `answer` and
 * `answerSchema` as the plain JSON objects they are (`task.answer` and
 * `task.answerSchema` are plain objects on the message already).
 */
export function taskToJson(t: Task): JsonObject {
  return toJson(TaskSchema, t, jsonOpts) as JsonObject;
}

/**
 * Whether two JSON values are equal: the same primitives (numbers by
 * value), arrays with equal elements in order, objects with the same keys
 * and equal values in any key order.
 */
export function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) {
    return true;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return false;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]!));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k]!, b[k]!));
}
