import { isIPv4 } from "node:net";

/** Splits `host:port` (`[::1]:50051` for IPv6). */
export function parseListen(listen: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(listen);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: (m[1] ?? m[2]) as string, port };
}

/** True for loopback hosts: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIPv4(host) && host.startsWith("127."));
}
