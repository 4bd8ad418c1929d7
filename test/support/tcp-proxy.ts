import { createConnection, createServer, type Socket } from "node:net";

/**
 * A loopback TCP proxy a test runs in front of a real server, to make it unreachable and bring it
 * back without touching the server itself. `cut()` resets every connection and every new one;
 * `stall()` keeps connections open but forwards nothing (a database that went silent);
 * `restore()` forwards again.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  cut(): void;
  stall(): void;
  restore(): void;
  close(): Promise<void>;
}

type Mode = "forward" | "cut" | "stall";

export async function startTcpProxy(target: {
  readonly host: string;
  readonly port: number;
}): Promise<TcpProxy> {
  let mode: Mode = "forward";
  let accepted = 0;
  const pairs = new Set<[Socket, Socket | undefined]>();

  const server = createServer((client) => {
    accepted++;
    if (mode === "cut") {
      client.resetAndDestroy();
      return;
    }
    const pair: [Socket, Socket | undefined] = [client, undefined];
    pairs.add(pair);
    const forget = () => {
      pairs.delete(pair);
      client.destroy();
      pair[1]?.destroy();
    };
    client.on("error", forget).on("close", forget);
    if (mode === "stall") return; // never connects upstream: the client waits
    const upstream = createConnection(target);
    pair[1] = upstream;
    upstream.on("error", forget).on("close", forget);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");

  const resetAll = () => {
    for (const [client, upstream] of [...pairs]) {
      client.resetAndDestroy();
      upstream?.destroy();
    }
    pairs.clear();
  };

  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    cut() {
      mode = "cut";
      resetAll();
    },
    stall() {
      mode = "stall";
      for (const [client, upstream] of pairs) {
        client.unpipe();
        upstream?.unpipe();
        client.pause();
        upstream?.pause();
      }
    },
    restore() {
      // Stalled connections stay dead (their bytes are lost): drop them, as a network would.
      if (mode === "stall") resetAll();
      mode = "forward";
    },
    async close() {
      mode = "cut";
      resetAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
