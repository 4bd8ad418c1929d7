import { Client, credentials, type ServiceError } from "@grpc/grpc-js";
import { connect as http2Connect, type IncomingHttpHeaders } from "node:http2";
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

/** What a hand-framed HTTP/2 call got back: the grpc-status (from trailers, or trailers-only headers), its message, and the response messages. */
export interface FramedOutcome {
  readonly code: number;
  readonly details: string;
  readonly messages: number;
}

/** One gRPC length-prefixed message (uncompressed). */
export function grpcFrame(body: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/**
 * A gRPC call framed by hand over a raw HTTP/2 session (node:http2), for framing grpc-js clients
 * never send: `messages` are sent as they are (zero, one or several), then the stream is
 * half-closed; `headers` are added to the request's (e.g. a malformed `grpc-timeout`).
 */
export function framedCall(
  address: string,
  path: string,
  messages: readonly Uint8Array[],
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<FramedOutcome> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`http://${address}`);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`framedCall ${path}: no status within ${timeoutMs} ms`));
    }, timeoutMs);
    session.on("error", (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc+proto",
      te: "trailers",
      ...headers,
    });
    let head: IncomingHttpHeaders = {};
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (fields: IncomingHttpHeaders) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const code = Number(fields["grpc-status"] ?? head["grpc-status"] ?? Number.NaN);
      const message = fields["grpc-message"] ?? head["grpc-message"] ?? "";
      const raw = Array.isArray(message) ? message.join(",") : message;
      let frames = 0;
      for (let at = 0; at + 5 <= received.length; at += 5 + received.readUInt32BE(at + 1)) frames++;
      session.close();
      resolve({ code, details: decodeURIComponent(raw), messages: frames });
    };
    stream.on("response", (h) => {
      head = h;
      if (head["grpc-status"] !== undefined) stream.once("close", () => finish({}));
    });
    stream.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    stream.on("trailers", (t: IncomingHttpHeaders) => stream.once("close", () => finish(t)));
    stream.on("error", () => undefined);
    for (const m of messages) stream.write(grpcFrame(m));
    stream.end();
  });
}
