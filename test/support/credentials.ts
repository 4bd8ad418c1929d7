import {
  Client,
  credentials,
  Metadata,
  status,
  type ChannelCredentials,
  type ServiceError,
} from "@grpc/grpc-js";

/** What a raw call answered: its status code and details (OK is 0). */
export interface Answer {
  readonly code: number;
  readonly details: string;
}

/**
 * Calls `path` with an empty request message (raw bytes) and `authorization` metadata when given;
 * answers the status. A stream is read to its end (or its first message).
 */
export function callRaw(
  address: string,
  path: string,
  options: {
    readonly streaming?: boolean;
    readonly authorization?: string;
    readonly body?: Uint8Array;
    readonly credentials?: ChannelCredentials;
    /** The call's deadline (default 5 s); a stream that is served and stays open ends there. */
    readonly deadlineMs?: number;
  } = {},
): Promise<Answer> {
  const client = new Client(address, options.credentials ?? credentials.createInsecure());
  const identity = (b: Buffer) => b;
  const md = new Metadata();
  if (options.authorization !== undefined) md.set("authorization", options.authorization);
  const call = { deadline: Date.now() + (options.deadlineMs ?? 5_000) };
  const body = Buffer.from(options.body ?? new Uint8Array());
  return new Promise<Answer>((resolve) => {
    const done = (err: ServiceError | null | undefined) =>
      resolve(err ? { code: err.code, details: err.details } : { code: status.OK, details: "" });
    if (!options.streaming) {
      client.makeUnaryRequest(path, identity, identity, body, md, call, (err) => done(err));
      return;
    }
    const stream = client.makeServerStreamRequest(path, identity, identity, body, md, call);
    stream.on("data", () => {
      stream.cancel();
      done(undefined);
    });
    stream.on("error", (err: ServiceError) => done(err));
    stream.on("end", () => done(undefined));
  }).finally(() => client.close());
}
