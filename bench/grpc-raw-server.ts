/**
 * A grpc-js server that answers each method path it is given with fixed response bytes, with no
 * decoding and no logging, in its own process as Charter is; with `workers` > 1 it runs on
 * node:cluster like `charter serve --workers`. The baseline and the floor of `npm run bench:grpc`
 * are this server with different handlers.
 */
import {
  Server,
  ServerCredentials,
  type handleUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import cluster from "node:cluster";
import { readFileSync } from "node:fs";

/** Handles one request: calls `answer()` once, when the path's fixed response is to be sent. */
export type RawHandler = (request: Buffer, answer: () => void) => void;

/**
 * Serves `responsesFile` (a JSON map from a method path to the base64 of its response) on
 * 127.0.0.1:`port`. `start` runs once per serving process (each worker) and makes its handler.
 */
export function serveRaw(
  name: string,
  port: number,
  workers: number,
  responsesFile: string,
  start: () => RawHandler,
): void {
  if (workers > 1 && cluster.isPrimary) {
    for (let i = 0; i < workers; i++) cluster.fork();
    process.on("SIGTERM", () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
      process.exitCode = 0;
    });
    return;
  }
  const responses = JSON.parse(readFileSync(responsesFile, "utf8")) as Record<string, string>;
  const handle = start();
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: UntypedServiceImplementation = {};
  for (const [path, base64] of Object.entries(responses)) {
    const answer = Buffer.from(base64, "base64");
    definition[path] = {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
      originalName: path,
    };
    const handler: handleUnaryCall<Buffer, Buffer> = (call, callback) => {
      handle(call.request, () => callback(null, answer));
    };
    implementation[path] = handler;
  }
  // As Charter serves: without channelz's per-call trackers (src/app/limits.ts).
  const server = new Server({ "grpc.enable_channelz": 0 });
  server.addService(definition as ServiceDefinition, implementation);
  server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    console.log(`${name} listening on 127.0.0.1:${port}`);
  });
  // Forced, then gone: a client the bench polled with may still hold its connection, and nothing here needs to finish.
  process.on("SIGTERM", () => {
    server.forceShutdown();
    process.exit(0);
  });
}
