import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
  file_grpc_health_v1_health,
} from "../gen/grpc/health/v1/health_pb.js";
import { bindService, type BindOptions, type ServiceBinding } from "./router.js";
import { RpcError } from "./rpc-error.js";

/** The generated file of grpc.health.v1, for server reflection. */
export const HEALTH_FILE = file_grpc_health_v1_health;

/** The health service and the statuses it reports. */
export interface HealthService {
  /** grpc.health.v1.Health (Check, Watch), served through the router. */
  readonly binding: ServiceBinding;
  /** Sets one service's status ("" is the server); Watchers of it are told. */
  setStatus(service: string, status: "SERVING" | "NOT_SERVING"): void;
}

/**
 * grpc.health.v1.Health for the named services (include "" for the server), all SERVING. When
 * `shutdown` aborts, every status turns NOT_SERVING first — Watchers are sent it, and Checks
 * from then on answer it — and only then do the open Watch streams end (UNAVAILABLE "server
 * shutting down"), so an open Watch never holds up the server's shutdown.
 */
export function createHealth(
  services: readonly string[],
  options: Pick<BindOptions, "interceptors" | "log"> & { readonly shutdown: AbortSignal },
): HealthService {
  const statuses = new Map<string, ServingStatus>(services.map((s) => [s, ServingStatus.SERVING]));
  let waiters: (() => void)[] = [];
  const changed = () => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  /** Resolves at the next status change, or when the signal aborts. */
  const nextChange = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const done = () => {
        signal.removeEventListener("abort", done);
        waiters = waiters.filter((w) => w !== done);
        resolve();
      };
      waiters.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  const setStatus = (service: string, status: ServingStatus) => {
    if (statuses.get(service) === status) return;
    statuses.set(service, status);
    changed();
  };

  // The streams end one turn of the event loop after the statuses flip: by then every Watcher
  // has written NOT_SERVING.
  const streamsEnd = new AbortController();
  const onShutdown = () => {
    for (const service of statuses.keys()) setStatus(service, ServingStatus.NOT_SERVING);
    setImmediate(() => streamsEnd.abort());
  };
  if (options.shutdown.aborted) onShutdown();
  else options.shutdown.addEventListener("abort", onShutdown, { once: true });

  const binding = bindService(
    Health,
    {
      async check(req) {
        const status = statuses.get(req.service);
        if (status === undefined)
          throw new RpcError("NOT_FOUND", `unknown service "${req.service.slice(0, 128)}"`);
        return { status };
      },
      async *watch(req, ctx) {
        let last: ServingStatus | undefined;
        while (!ctx.signal.aborted) {
          const status = statuses.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
          if (status !== last) {
            last = status;
            yield { status };
            continue; // look again: the status may have changed while the message was sent
          }
          await nextChange(ctx.signal);
        }
      },
    },
    { ...options, shutdown: streamsEnd.signal },
  );
  return { binding, setStatus: (service, status) => setStatus(service, ServingStatus[status]) };
}
