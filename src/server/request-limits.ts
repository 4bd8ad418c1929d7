import {
  ScalarType,
  type DescField,
  type DescMessage,
  type MessageShape,
} from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { repeatedFields } from "./memo.js";
import { RpcError } from "./rpc-error.js";

/**
 * Hard limits on every request field, applied by the router before a handler runs (docs/api.md
 * "Limits"). A string field's limit follows from its name: `arguments_json` → argumentsBytes,
 * other `*_json` → the message limit, `*_token` → tokenBytes, `purpose`/`note`/`reason` →
 * textLength, any other string (ids, names: call_id, tool_name, action_id, subject, owner,
 * profile…) → fieldLength. A repeated field holds at most listItems entries, `items` at most batch.
 */
export interface RequestLimits {
  readonly fieldLength: number;
  readonly textLength: number;
  readonly tokenBytes: number;
  readonly argumentsBytes: number;
  readonly listItems: number;
  readonly batch: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  fieldLength: 256,
  textLength: 4096,
  tokenBytes: 64 * 1024,
  argumentsBytes: 256 * 1024,
  listItems: 256,
  batch: 256,
};

const TEXT_FIELDS = new Set(["purpose", "note", "reason"]);

/** The limit of a string field, in characters (UTF-16 code units: never more than its UTF-8 bytes). */
function stringLimit(
  field: DescField,
  limits: RequestLimits,
): { max: number; setting: string } | undefined {
  const name = field.name;
  if (name === "arguments_json")
    return { max: limits.argumentsBytes, setting: "maxArgumentsBytes" };
  if (name.endsWith("_json")) return undefined;
  if (name.endsWith("_token")) return { max: limits.tokenBytes, setting: "maxTokenBytes" };
  if (TEXT_FIELDS.has(name)) return { max: limits.textLength, setting: "maxTextLength" };
  return { max: limits.fieldLength, setting: "maxFieldLength" };
}

function listLimit(field: DescField, limits: RequestLimits): { max: number; setting: string } {
  return field.name === "items"
    ? { max: limits.batch, setting: "maxBatch" }
    : { max: limits.listItems, setting: "maxListItems" };
}

/** RESOURCE_EXHAUSTED naming the field and the setting, never the value. */
function overLimit(path: string, problem: string): RpcError {
  return new RpcError("RESOURCE_EXHAUSTED", `${path}: ${problem}`, {
    fieldViolations: [{ field: path, description: problem }],
  });
}

/**
 * Counts the top-level repeated fields in the raw bytes, before decoding: a batch of a million
 * items is refused without building a million messages. Bytes that do not parse are left to the
 * decoder (which refuses them INVALID_ARGUMENT).
 */
export function precheckRequest(
  desc: DescMessage,
  bytes: Uint8Array,
  limits: RequestLimits,
): RpcError | undefined {
  const repeated = repeatedFieldsOf(desc);
  if (repeated.size === 0) return undefined;
  const counts = new Map<number, number>();
  try {
    const reader = new BinaryReader(bytes);
    while (reader.pos < reader.len) {
      const [fieldNo, wireType] = reader.tag();
      reader.skip(wireType, fieldNo);
      const field = repeated.get(fieldNo);
      if (!field || wireType !== WireType.LengthDelimited) continue;
      const n = (counts.get(fieldNo) ?? 0) + 1;
      counts.set(fieldNo, n);
      const limit =
        field.fieldKind === "map"
          ? { max: limits.listItems, setting: "maxListItems" }
          : listLimit(field, limits);
      if (n > limit.max)
        return overLimit(field.name, `at most ${limit.max} entries (${limit.setting})`);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** The top-level repeated fields of a message type, by field number, found once per type (`repeatedFields`). */
function repeatedFieldsOf(desc: DescMessage): ReadonlyMap<number, DescField> {
  let repeated = repeatedFields.get(desc);
  if (repeated === undefined) {
    const found = new Map<number, DescField>();
    // Entries of these arrive one per occurrence; packed scalar lists are counted after decoding.
    for (const field of desc.fields) {
      if (
        field.fieldKind === "map" ||
        (field.fieldKind === "list" &&
          (field.listKind === "message" || field.scalar === ScalarType.STRING))
      ) {
        found.set(field.number, field);
      }
    }
    repeatedFields.set(desc, (repeated = found));
  }
  return repeated;
}

/** Checks every string length and list size of a decoded request against the limits. */
export function checkRequestLimits<D extends DescMessage>(
  desc: D,
  message: MessageShape<D>,
  limits: RequestLimits,
): RpcError | undefined {
  return walk(reflect(desc, message), "", limits);
}

function walk(r: ReflectMessage, prefix: string, limits: RequestLimits): RpcError | undefined {
  for (const field of r.fields) {
    if (!r.isSet(field)) continue;
    const path = `${prefix}${field.name}`;
    switch (field.fieldKind) {
      case "scalar": {
        const err = checkString(field, path, r.get(field), limits);
        if (err) return err;
        break;
      }
      case "message": {
        const err = walk(r.get(field), `${path}.`, limits);
        if (err) return err;
        break;
      }
      case "list": {
        const list = r.get(field);
        const limit = listLimit(field, limits);
        if (list.size > limit.max)
          return overLimit(path, `at most ${limit.max} entries (${limit.setting})`);
        let i = 0;
        for (const item of list) {
          const at = `${path}[${i}]`;
          const err =
            field.listKind === "message"
              ? walk(item as ReflectMessage, `${at}.`, limits)
              : checkString(field, at, item, limits);
          if (err) return err;
          i += 1;
        }
        break;
      }
      case "map": {
        const map = r.get(field);
        if (map.size > limits.listItems)
          return overLimit(path, `at most ${limits.listItems} entries (maxListItems)`);
        for (const [key, value] of map) {
          if (typeof key === "string" && key.length > limits.fieldLength)
            return overLimit(
              path,
              `a key is longer than ${limits.fieldLength} characters (maxFieldLength)`,
            );
          const at = `${path}[${typeof key === "string" ? JSON.stringify(key) : String(key)}]`;
          const err =
            field.mapKind === "message"
              ? walk(value as ReflectMessage, `${at}.`, limits)
              : checkString(field, at, value, limits);
          if (err) return err;
        }
        break;
      }
      case "enum":
        break;
    }
  }
  return undefined;
}

function checkString(
  field: DescField,
  path: string,
  value: unknown,
  limits: RequestLimits,
): RpcError | undefined {
  if (typeof value !== "string") return undefined;
  const limit = stringLimit(field, limits);
  if (limit && value.length > limit.max)
    return overLimit(path, `longer than ${limit.max} characters (${limit.setting})`);
  return undefined;
}
