import { pino } from "pino";
import { startCharter } from "../../app/charter.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, configFrom, parse } from "../options.js";

/**
 * `charter serve`: runs the server until SIGTERM or SIGINT (graceful: in-flight calls finish,
 * then the store closes). SIGHUP reloads catalog and policy; a bad reload keeps the old pair.
 */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, CONFIG_FLAGS);
  const config = await configFrom(values, io.env);
  const log = pino({ level: config.logLevel, base: { service: "charter" } });
  const running = await startCharter(config, { log });
  io.err(`charter listening on ${running.address}`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, "shutting down");
      process.off("SIGHUP", reload);
      running.stop().then(resolve, (err: unknown) => {
        log.error({ err }, "shutdown failed");
        resolve();
      });
    };
    const reload = () => void running.reload().catch(() => undefined);
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
    process.on("SIGHUP", reload);
  });
  return 0;
}
