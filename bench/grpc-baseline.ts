/**
 * The baseline of `npm run bench:grpc`: an empty grpc-js server that answers every method path it
 * is given with fixed response bytes and does nothing else (no decoding, no logging), in its own
 * process as Charter is. With `workers` > 1 it runs on node:cluster like `charter serve --workers`.
 *
 *   node dist-bench/bench/grpc-baseline.js PORT WORKERS RESPONSES_JSON
 *
 * RESPONSES_JSON is a file mapping a method path to the base64 of the response message it answers.
 */
import { serveRaw } from "./grpc-raw-server.js";

const [portText, workersText, responsesFile] = process.argv.slice(2);
serveRaw(
  "baseline",
  Number(portText),
  Number(workersText ?? 1),
  responsesFile as string,
  () => (_request, answer) => answer(),
);
