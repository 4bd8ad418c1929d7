import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  Client,
  credentials,
  Metadata,
  type CallOptions,
  type ChannelCredentials,
  type ClientOptions,
} from "@grpc/grpc-js";

/** Per-call options: a deadline and metadata (credentials, request ids). */
export interface CallOptionsLite {
  /** Milliseconds from now, or an absolute Date. */
  readonly timeoutMs?: number;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** A promise-returning (or async-iterable, for server streaming) method per RPC, typed from the descriptor. */
export type PromiseClient<S extends GenService<GenServiceMethods>> = {
  [K in keyof S["method"]]: S["method"][K] extends {
    methodKind: "unary";
    input: infer I extends DescMessage;
    output: infer O extends DescMessage;
  }
    ? (request: MessageInitShape<I>, options?: CallOptionsLite) => Promise<MessageShape<O>>
    : S["method"][K] extends {
          methodKind: "server_streaming";
          input: infer I extends DescMessage;
          output: infer O extends DescMessage;
        }
      ? (request: MessageInitShape<I>, options?: CallOptionsLite) => AsyncIterable<MessageShape<O>>
      : never;
} & { close(): void };

export interface ClientConfig {
  /** `host:port`. */
  readonly address: string;
  /** Insecure (plaintext) by default, for loopback. */
  readonly credentials?: ChannelCredentials;
  readonly channelOptions?: ClientOptions;
  /** Metadata sent with every call (e.g. an authorization header). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Creates a typed promise client for one generated service over @grpc/grpc-js, built from the
 * same protobuf-es descriptors as the server.
 */
export function createPromiseClient<S extends GenService<GenServiceMethods>>(
  service: S,
  config: ClientConfig,
): PromiseClient<S> {
  const client = new Client(
    config.address,
    config.credentials ?? credentials.createInsecure(),
    config.channelOptions,
  );
  const out: Record<string, unknown> = { close: () => client.close() };
  for (const method of service.methods) {
    const path = `/${service.typeName}/${method.name}`;
    const serialize = (init: MessageInitShape<DescMessage>) =>
      Buffer.from(toBinary(method.input, create(method.input, init)));
    const deserialize = (bytes: Buffer) => fromBinary(method.output, bytes);
    if (method.methodKind === "unary") {
      out[method.localName] = (request: MessageInitShape<DescMessage>, options?: CallOptionsLite) =>
        new Promise((resolve, reject) => {
          const signal = options?.signal;
          const onAbort = () => call.cancel();
          const call = client.makeUnaryRequest(
            path,
            serialize,
            deserialize,
            request,
            metadataOf(config, options),
            callOptionsOf(options),
            (err, value) => {
              signal?.removeEventListener("abort", onAbort);
              if (err) reject(err);
              else resolve(value);
            },
          );
          if (signal?.aborted) call.cancel();
          else signal?.addEventListener("abort", onAbort, { once: true });
        });
    } else if (method.methodKind === "server_streaming") {
      out[method.localName] = async function* (
        request: MessageInitShape<DescMessage>,
        options?: CallOptionsLite,
      ) {
        const stream = client.makeServerStreamRequest(
          path,
          serialize,
          deserialize,
          request,
          metadataOf(config, options),
          callOptionsOf(options),
        );
        const signal = options?.signal;
        const onAbort = () => stream.cancel();
        if (signal?.aborted) stream.cancel();
        else signal?.addEventListener("abort", onAbort, { once: true });
        let finished = false;
        try {
          for await (const message of stream as AsyncIterable<MessageShape<DescMessage>>)
            yield message;
          finished = true;
        } finally {
          signal?.removeEventListener("abort", onAbort);
          // Leaving the loop early (break, return, a throw in the loop body) cancels the call on the server.
          if (!finished) stream.cancel();
        }
      };
    }
  }
  return out as PromiseClient<S>;
}

function metadataOf(config: ClientConfig, options: CallOptionsLite | undefined): Metadata {
  const md = new Metadata();
  for (const [k, v] of Object.entries({ ...config.metadata, ...options?.metadata })) md.set(k, v);
  return md;
}

function callOptionsOf(options: CallOptionsLite | undefined): CallOptions {
  return options?.timeoutMs === undefined
    ? {}
    : { deadline: new Date(Date.now() + options.timeoutMs) };
}
