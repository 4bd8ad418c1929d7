import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { CallContext, ServiceBinding } from "../../src/server/router.js";

/** A real grpc-js server on an ephemeral loopback port serving the given bindings. */
export async function serve(
  bindings: readonly ServiceBinding[],
): Promise<{ address: string; stop(): void }> {
  const server = new Server();
  for (const b of bindings) server.addService(b.definition, b.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** A promise with its resolver, for handlers to report what they saw. */
export interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Bounds a wait, so that a missing event fails the test with a message instead of hanging it. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves when the call's signal aborts (at once when it already has). */
export function aborted(ctx: CallContext): Promise<void> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
