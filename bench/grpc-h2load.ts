/**
 * Runs h2load against one server with pre-framed gRPC request bytes and reads what it measured:
 * throughput from its summary, p50/p99 from its per-request log (h2load itself prints only the
 * mean), and how many answers were not HTTP 200.
 */
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One load shape: connections and streams in flight per connection. */
export interface Shape {
  readonly connections: number;
  readonly streams: number;
}

export interface H2loadResult {
  readonly rps: number;
  /** Milliseconds, from the per-request log. */
  readonly p50: number;
  readonly p99: number;
  readonly done: number;
  /** Requests that failed, errored, timed out or were answered with an HTTP status other than 2xx. */
  readonly failed: number;
}

/** Seconds h2load runs before it starts measuring. */
export const WARM_UP_SECONDS = 1;

/** The 5-byte gRPC message prefix (uncompressed, big-endian length) and the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** Drives `url` with `frame` for `seconds` (after a 1 s warm-up) at `shape`. */
export async function h2load(
  url: string,
  frame: Buffer,
  shape: Shape,
  seconds: number,
  scratch: string,
): Promise<H2loadResult> {
  const body = join(scratch, "body.bin");
  const log = join(scratch, "h2load.log");
  writeFileSync(body, frame);
  rmSync(log, { force: true });
  const args = [
    ...["-c", String(shape.connections), "-m", String(shape.streams), "-t", "1"],
    ...["-D", String(seconds), "--warm-up-time", String(WARM_UP_SECONDS)],
    ...[
      "-d",
      body,
      "-H",
      "content-type: application/grpc",
      "-H",
      "te: trailers",
      "--log-file",
      log,
    ],
    url,
  ];
  const out = await new Promise<string>((resolve, reject) =>
    execFile("h2load", args, { maxBuffer: 1 << 24 }, (err, stdout) =>
      err ? reject(new Error(`h2load failed: ${err.message}\n${stdout}`)) : resolve(stdout),
    ),
  );
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(out)?.[1] ?? NaN);
  const requests =
    /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
      out,
    );
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  if (!requests || !codes || Number.isNaN(rps))
    throw new Error(`unreadable h2load output:\n${out}`);
  const done = Number(requests[3]);
  const failed =
    [5, 6, 7].reduce((n, i) => n + Number(requests[i]), 0) +
    [2, 3, 4].reduce((n, i) => n + Number(codes[i]), 0);
  const times = readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => Number(line.split("\t")[2]) / 1000)
    .sort((a, b) => a - b);
  return { rps, p50: quantile(times, 0.5), p99: quantile(times, 0.99), done, failed };
}

/** The q-quantile of sorted values (NaN when empty). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** The median of values. */
export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
