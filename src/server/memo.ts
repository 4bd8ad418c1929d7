import type { DescField, DescMessage } from "@bufbuild/protobuf";
import type { MessagePlan } from "./encode.js";

// The transport's memo tables: the only module-level caches of `src/server`
// (test/architecture/module-state.test.ts fails on one anywhere else). They are safe to share
// between servers and contexts: each is keyed weakly by a value that never changes — a
// protobuf message descriptor, or a frozen message — and holds only a function of it, so
// nothing in them can change what a server answers, and an entry goes with its key.

/** How each message type is encoded (`encodeMessage`); null for a type left to `toBinary`. */
export const encodePlans = new WeakMap<DescMessage, MessagePlan | null>();

/**
 * The encodings of frozen messages whose fields are all scalars (the view entries every view of
 * an action shares, say): encoded once, their bytes copied into every later response.
 */
export const frozenEncodings = new WeakMap<object, Buffer>();

/** The top-level repeated fields of each message type, by field number (`precheckRequest`). */
export const repeatedFields = new WeakMap<DescMessage, ReadonlyMap<number, DescField>>();
