/**
 * The baseline of `npm run bench:grpc`: an empty grpc-js server that answers every method path it
 * is given with fixed response bytes and does nothing else (no decoding, no logging), in its own
 * process as Charter is. With `workers` > 1 it runs on node:cluster like `charter serve --workers`.
 *
 *   node dist-bench/bench/grpc-baseline.js PORT WORKERS RESPONSES_JSON
 *
 * RESPONSES_JSON is a file mapping a method path to the base64 of the response message it answers.
 */
import { Server, ServerCredentials, type handleUnaryCall, type ServiceDefinition, type UntypedServiceImplementation } from "@grpc/grpc-js";
import cluster from "node:cluster";
import { readFileSync } from "node:fs";

const [portText, workersText, responsesFile] = process.argv.slice(2);
const port = Number(portText);
const workers = Number(workersText ?? 1);

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on("SIGTERM", () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    process.exitCode = 0;
  });
} else {
  const responses = JSON.parse(readFileSync(responsesFile as string, "utf8")) as Record<string, string>;
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
    const handler: handleUnaryCall<Buffer, Buffer> = (_call, callback) => callback(null, answer);
    implementation[path] = handler;
  }
  const server = new Server();
  server.addService(definition as ServiceDefinition, implementation);
  server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    console.log(`baseline listening on 127.0.0.1:${port}`);
  });
  // Forced, then gone: a client the bench polled with may still hold its connection, and nothing here needs to finish.
  process.on("SIGTERM", () => {
    server.forceShutdown();
    process.exit(0);
  });
}
