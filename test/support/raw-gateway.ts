import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";

/** A spawned `charter mcp-gateway` spoken to line by line: raw JSON-RPC in, parsed replies out. */
export interface RawGateway {
  /** Writes one line: a string as it is (any bytes a test wants), anything else as JSON. */
  send(message: unknown): void;
  /** The next reply, parsed. */
  next(): Promise<unknown>;
  /** Ends stdin and waits for the gateway to exit. */
  stop(): Promise<void>;
}

/** Spawns the gateway with `args` (after node), initializes the MCP session and answers the wire. */
export async function startRawGateway(args: readonly string[]): Promise<RawGateway> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [...args]);
  const replies: unknown[] = [];
  let waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    replies.push(JSON.parse(line));
    const w = waiters;
    waiters = [];
    w.forEach((resolve) => resolve());
  });
  const gateway: RawGateway = {
    send: (message) =>
      void child.stdin.write(
        `${typeof message === "string" ? message : JSON.stringify(message)}\n`,
      ),
    async next() {
      while (replies.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return replies.shift();
    },
    async stop() {
      child.stdin.end();
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    },
  };
  gateway.send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  });
  const init = (await gateway.next()) as {
    id?: unknown;
    result?: { serverInfo?: { name?: string } };
  };
  if (init.id !== 0 || init.result?.serverInfo?.name !== "charter-mcp-gateway")
    throw new Error(`the gateway did not initialize: ${JSON.stringify(init)}`);
  gateway.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return gateway;
}
