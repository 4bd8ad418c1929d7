import {
  ScalarType,
  toBinary,
  type DescField,
  type DescMessage,
  type MessageShape,
} from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence as Presence } from "@bufbuild/protobuf/wkt";
import { encodePlans, frozenEncodings } from "./memo.js";

/** How one field is written, found once per message type. */
interface FieldPlan {
  readonly localName: string;
  /** The oneof the field belongs to (its `case` is the field's local name); undefined for a plain field. */
  readonly oneof: string | undefined;
  /** Explicit presence: written whenever the property is defined; implicit: only when not the zero value. */
  readonly explicit: boolean;
  readonly kind: "string" | "bool" | "int32" | "uint32" | "message" | "messages" | "strings";
  /** The field's tag as a varint: number and wire type. */
  readonly tag: number;
  /** The nested type's plan, for message fields. */
  readonly nested?: MessagePlan;
}

/** How a message type is written: its fields in number order (kept per type in `memo.ts`). */
export interface MessagePlan {
  readonly fields: readonly FieldPlan[];
  /** Every field a string, boolean or 32-bit integer (or enum): a frozen message of the type cannot change. */
  scalarOnly: boolean;
}

const LENGTH_DELIMITED = WireType.LengthDelimited;
const VARINT = WireType.Varint;

/**
 * The message's protobuf binary encoding, byte for byte what protobuf-es `toBinary` writes:
 * fields in number order, implicit-presence fields only when not zero, unknown fields kept (by
 * handing such a message to `toBinary`). Message types made only of strings, booleans, 32-bit
 * integers, enums, nested messages and lists of messages or strings are written in one pass into
 * one buffer (their size counted first); any other type is encoded by `toBinary`. A nested message
 * that is frozen and made of scalars only is encoded once and its bytes copied after that.
 */
export function encodeMessage<D extends DescMessage>(
  desc: D,
  message: MessageShape<D>,
): Uint8Array {
  const plan = planOf(desc);
  if (plan === null || hasUnknown(plan, message)) return toBinary(desc, message);
  const out = Buffer.allocUnsafe(sizeOf(plan, message));
  const end = write(plan, message, out, 0);
  if (end !== out.length)
    throw new Error(`encodeMessage: wrote ${end} bytes of ${out.length} for ${desc.typeName}`);
  return out;
}

function planOf(desc: DescMessage): MessagePlan | null {
  const known = encodePlans.get(desc);
  if (known !== undefined) return known;
  const fields: FieldPlan[] = [];
  const plan: MessagePlan = { fields, scalarOnly: false };
  // A recursive type sees itself as planned while its fields are examined.
  encodePlans.set(desc, plan);
  for (const field of [...desc.fields].sort((a, b) => a.number - b.number)) {
    const f = fieldPlan(field);
    if (f === null) {
      encodePlans.set(desc, null);
      return null;
    }
    fields.push(f);
  }
  plan.scalarOnly = fields.every((f) => f.nested === undefined && f.kind !== "strings");
  return plan;
}

/**
 * The bytes of a nested message when it is one that is encoded once (else undefined): a frozen
 * message whose fields are all scalars cannot change, so it is encoded once (`frozenEncodings`)
 * and its bytes are copied into every later response it is part of.
 */
function encodedOnce(plan: MessagePlan, message: unknown): Buffer | undefined {
  if (!plan.scalarOnly || !Object.isFrozen(message)) return undefined;
  const m = message as object;
  let bytes = frozenEncodings.get(m);
  if (bytes === undefined) {
    if (hasUnknown(plan, m)) return undefined;
    bytes = Buffer.allocUnsafe(sizeOf(plan, m));
    write(plan, m, bytes, 0);
    frozenEncodings.set(m, bytes);
  }
  return bytes;
}

/** A nested message's size, from its kept encoding when it has one. */
function nestedSize(plan: MessagePlan, message: unknown): number {
  return encodedOnce(plan, message)?.length ?? sizeOf(plan, message);
}

function fieldPlan(field: DescField): FieldPlan | null {
  if (field.presence !== Presence.EXPLICIT && field.presence !== Presence.IMPLICIT) return null;
  const base = {
    localName: field.localName,
    oneof: field.oneof?.localName,
    explicit: field.presence === Presence.EXPLICIT || field.oneof !== undefined,
  };
  const tag = (wireType: WireType) => ((field.number << 3) | wireType) >>> 0;
  switch (field.fieldKind) {
    case "scalar":
      switch (field.scalar) {
        case ScalarType.STRING:
          return { ...base, kind: "string", tag: tag(LENGTH_DELIMITED) };
        case ScalarType.BOOL:
          return { ...base, kind: "bool", tag: tag(VARINT) };
        case ScalarType.INT32:
          return { ...base, kind: "int32", tag: tag(VARINT) };
        case ScalarType.UINT32:
          return { ...base, kind: "uint32", tag: tag(VARINT) };
        default:
          return null;
      }
    case "enum":
      return { ...base, kind: "int32", tag: tag(VARINT) };
    case "message": {
      if (field.delimitedEncoding) return null;
      const nested = planOf(field.message);
      return nested === null
        ? null
        : { ...base, kind: "message", tag: tag(LENGTH_DELIMITED), nested };
    }
    case "list": {
      if (field.listKind === "scalar" && field.scalar === ScalarType.STRING)
        return { ...base, kind: "strings", tag: tag(LENGTH_DELIMITED) };
      if (field.listKind !== "message" || field.delimitedEncoding) return null;
      const nested = planOf(field.message);
      return nested === null
        ? null
        : { ...base, kind: "messages", tag: tag(LENGTH_DELIMITED), nested };
    }
    default:
      return null;
  }
}

type Fields = Record<string, unknown>;

/** The field's value when it is to be written, else undefined. */
function valueOf(f: FieldPlan, message: Fields): unknown {
  let value: unknown;
  if (f.oneof !== undefined) {
    const selected = message[f.oneof] as { case?: string; value?: unknown } | undefined;
    if (selected?.case !== f.localName) return undefined;
    value = selected.value;
  } else value = message[f.localName];
  if (value === undefined) return undefined;
  if (f.explicit) return value;
  switch (f.kind) {
    case "string":
      return value === "" ? undefined : value;
    case "bool":
      return value === false ? undefined : value;
    case "int32":
    case "uint32":
      return value === 0 ? undefined : value;
    case "messages":
    case "strings":
      return (value as readonly unknown[]).length === 0 ? undefined : value;
    case "message":
      return value;
  }
}

function hasUnknown(plan: MessagePlan, message: unknown): boolean {
  const unknown = (message as { $unknown?: readonly unknown[] }).$unknown;
  if (unknown !== undefined && unknown.length > 0) return true;
  for (const f of plan.fields) {
    if (f.nested === undefined) continue;
    const value = valueOf(f, message as Fields);
    if (value === undefined) continue;
    if (
      f.kind === "message"
        ? hasUnknown(f.nested, value)
        : (value as readonly unknown[]).some((m) => hasUnknown(f.nested as MessagePlan, m))
    )
      return true;
  }
  return false;
}

function varintSize(n: number): number {
  // A negative int32 is written as its 64-bit two's complement: ten bytes.
  if (n < 0) return 10;
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function lengthDelimitedSize(tag: number, length: number): number {
  return varintSize(tag) + varintSize(length) + length;
}

function sizeOf(plan: MessagePlan, message: unknown): number {
  let size = 0;
  for (const f of plan.fields) {
    const value = valueOf(f, message as Fields);
    if (value === undefined) continue;
    switch (f.kind) {
      case "string":
        size += lengthDelimitedSize(f.tag, Buffer.byteLength(value as string, "utf8"));
        break;
      case "bool":
        size += varintSize(f.tag) + 1;
        break;
      case "int32":
      case "uint32":
        size += varintSize(f.tag) + varintSize(value as number);
        break;
      case "message":
        size += lengthDelimitedSize(f.tag, nestedSize(f.nested as MessagePlan, value));
        break;
      case "messages":
        for (const item of value as readonly unknown[])
          size += lengthDelimitedSize(f.tag, nestedSize(f.nested as MessagePlan, item));
        break;
      case "strings":
        for (const item of value as readonly string[])
          size += lengthDelimitedSize(f.tag, Buffer.byteLength(item, "utf8"));
        break;
    }
  }
  return size;
}

function writeVarint(out: Buffer, at: number, n: number): number {
  if (n < 0) {
    // 64-bit two's complement of a negative int32, as protobuf-es writes it.
    let lo = n >>> 0;
    for (let i = 0; i < 4; i++) {
      out[at++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    // Bits 28..34: the low word's top 4 bits, then the high word (all ones) above them.
    out[at++] = (lo & 0x0f) | 0x70 | 0x80;
    for (let i = 0; i < 4; i++) out[at++] = 0xff;
    out[at++] = 0x01;
    return at;
  }
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[at++] = n;
  return at;
}

function writeString(out: Buffer, at: number, tag: number, text: string): number {
  at = writeVarint(out, at, tag);
  at = writeVarint(out, at, Buffer.byteLength(text, "utf8"));
  return at + out.write(text, at, "utf8");
}

function writeNested(
  out: Buffer,
  at: number,
  tag: number,
  plan: MessagePlan,
  message: unknown,
): number {
  at = writeVarint(out, at, tag);
  const bytes = encodedOnce(plan, message);
  if (bytes !== undefined) {
    at = writeVarint(out, at, bytes.length);
    return at + bytes.copy(out, at);
  }
  at = writeVarint(out, at, sizeOf(plan, message));
  return write(plan, message, out, at);
}

function write(plan: MessagePlan, message: unknown, out: Buffer, at: number): number {
  for (const f of plan.fields) {
    const value = valueOf(f, message as Fields);
    if (value === undefined) continue;
    switch (f.kind) {
      case "string":
        at = writeString(out, at, f.tag, value as string);
        break;
      case "bool":
        at = writeVarint(out, at, f.tag);
        out[at++] = value === true ? 1 : 0;
        break;
      case "int32":
      case "uint32":
        at = writeVarint(out, writeVarint(out, at, f.tag), value as number);
        break;
      case "message":
        at = writeNested(out, at, f.tag, f.nested as MessagePlan, value);
        break;
      case "messages":
        for (const item of value as readonly unknown[])
          at = writeNested(out, at, f.tag, f.nested as MessagePlan, item);
        break;
      case "strings":
        for (const item of value as readonly string[]) at = writeString(out, at, f.tag, item);
        break;
    }
  }
  return at;
}
