import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import { INVALID_REQUEST, readReceived } from "../interop/mcp-received.js";

/**
 * The agent-facing stdio transport: newline-delimited JSON-RPC, like the SDK's, except that what
 * the SDK cannot read is answered rather than dropped. A JSON-RPC batch (an array; MCP removed
 * batching in 2025-06-18) is answered element by element with an Invalid Request error for each
 * request in it — nothing in a batch is ever forwarded or decided. A line that is not JSON, or not
 * a JSON-RPC message, is answered with an error too.
 */
export class GatewayStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer = "";
  private readonly onData = (chunk: Buffer) => this.read(chunk);
  private readonly onEnd = () => void this.close();

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {}

  start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage | readonly unknown[]): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  close(): Promise<void> {
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.onclose?.();
    return Promise.resolve();
  }

  private read(chunk: Buffer): void {
    this.buffer += chunk.toString("utf8");
    for (let end = this.buffer.indexOf("\n"); end >= 0; end = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, end).replace(/\r$/, "");
      this.buffer = this.buffer.slice(end + 1);
      if (line.trim() !== "") this.receive(line);
    }
  }

  private receive(line: string): void {
    const received = readReceived(line);
    if (!received.ok) {
      void this.send(errorResponse(received.id ?? null, received.code, received.message));
      return;
    }
    const { value } = received;
    if (Array.isArray(value)) {
      const answers = value.flatMap((m) =>
        idOf(m) === undefined
          ? []
          : [
              errorResponse(
                idOf(m) ?? null,
                INVALID_REQUEST,
                "JSON-RPC batches are not accepted by this gateway; send each request on its own line",
              ),
            ],
      );
      // An empty batch is one Invalid Request; a batch of notifications only is answered by nothing (JSON-RPC 2.0 §6).
      if (value.length === 0)
        void this.send(errorResponse(null, INVALID_REQUEST, "Invalid Request: an empty batch"));
      else if (answers.length > 0) void this.send(answers);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) this.onmessage?.(parsed.data);
    else
      void this.send(
        errorResponse(
          idOf(value) ?? null,
          INVALID_REQUEST,
          "Invalid Request: not a JSON-RPC 2.0 message",
        ),
      );
  }
}

function idOf(message: unknown): string | number | undefined {
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined;
  const id = message.id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

function errorResponse(id: string | number | null, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage;
}
