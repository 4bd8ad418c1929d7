import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { CONTRACT_FILES } from "../../src/server/services.js";

/** A unary RPC of the public contract, by path, from the generated descriptors. */
export interface RawMethod {
  readonly path: string;
  readonly kind: "unary" | "server_streaming";
}

/** Every RPC of the public contract, derived from the generated file descriptors. */
export function contractMethods(): RawMethod[] {
  return CONTRACT_FILES.flatMap((file) =>
    file.services.flatMap((service) =>
      service.methods.map((m) => ({
        path: `/${service.typeName}/${m.name}`,
        kind:
          m.methodKind === "server_streaming" ? ("server_streaming" as const) : ("unary" as const),
      })),
    ),
  );
}

/** The outcome of one raw call: the response bytes, or the status code. */
export type RawOutcome =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly code: number; readonly details: string };

/** A grpc-js client that sends raw bytes (identity serializers) to any path. */
export function rawClient(address: string): {
  call(path: string, body: Uint8Array, deadlineMs?: number): Promise<RawOutcome>;
  close(): void;
} {
  const client = new Client(address, credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
    "grpc.max_send_message_length": -1,
  });
  return {
    call(path, body, deadlineMs = 10_000) {
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          path,
          (b: Uint8Array) => Buffer.from(b),
          (b: Buffer) => b,
          body,
          { deadline: Date.now() + deadlineMs },
          (err: ServiceError | null, bytes?: Buffer) =>
            resolve(
              err
                ? { ok: false, code: err.code, details: err.details }
                : { ok: true, bytes: bytes ?? Buffer.alloc(0) },
            ),
        );
      });
    },
    close: () => client.close(),
  };
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function inParallel<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
