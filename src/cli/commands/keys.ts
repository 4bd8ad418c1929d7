import type { createAppContext } from "../../app/context.js";
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateSigningKey,
  type StoredApiKey,
} from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { withTarget } from "../target.js";

/**
 * `charter keys`: manages callers' API keys and the signing keys, on the data dir. A running
 * server sees a new or revoked API key at its next call, and a rotated signing key at its next
 * key reload (every 30 s, or at once on SIGHUP).
 */
export async function keysCommand(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseKeys(rest);
  if (values.server !== undefined || (io.env["CHARTER_SERVER"] ?? "") !== "") {
    throw new UsageError(
      "charter keys works on the data dir only: there is no key-management RPC (unset --server / CHARTER_SERVER)",
    );
  }
  const run = (fn: (ctx: Awaited<ReturnType<typeof createAppContext>>) => Promise<number>) =>
    withTarget(
      undefined,
      () => configFrom(values, io.env),
      io,
      (target) => {
        if (target.kind !== "local") throw new Error("charter keys runs offline");
        return fn(target.ctx);
      },
    );
  switch (action) {
    case "create": {
      if (positionals.length > 0)
        throw new UsageError(`unexpected argument "${String(positionals[0])}"`);
      if (values.principal === undefined) throw new UsageError("--principal is required");
      const principal = values.principal;
      return run(async (ctx) => {
        const { key, secret } = await createApiKey(ctx, { principal, roles: values.role ?? [] });
        io.err(
          `created ${key.id} for ${key.principal} (${key.roles.join(", ")}); the secret below is shown only now`,
        );
        io.out(secret);
        return 0;
      });
    }
    case "list":
      return run(async (ctx) => {
        for (const key of await listApiKeys(ctx)) io.out(keyLine(key));
        return 0;
      });
    case "revoke": {
      const [id, ...extra] = positionals;
      if (id === undefined || extra.length > 0)
        throw new UsageError("charter keys revoke takes one KEY_ID");
      return run(async (ctx) => {
        await revokeApiKey(ctx, id);
        io.out(`revoked ${id}`);
        return 0;
      });
    }
    case "rotate-signing":
      return run(async (ctx) => {
        io.out(`signing with ${await rotateSigningKey(ctx)}`);
        return 0;
      });
    default:
      throw new UsageError(
        action === undefined ? "a keys command is required" : `unknown keys command "${action}"`,
      );
  }
}

function parseKeys(args: readonly string[]) {
  return parse(
    args,
    {
      ...CONFIG_FLAGS,
      principal: { type: "string" },
      role: { type: "string", multiple: true },
      server: { type: "string" },
    },
    true,
  );
}

/** One key per line: id, principal, roles, creation time and revocation time (or `active`). */
function keyLine(key: StoredApiKey): string {
  const at = (s: number) => new Date(s * 1000).toISOString();
  return [
    key.id,
    key.principal,
    key.roles.join(","),
    at(key.createdAt),
    key.revokedAt === undefined ? "active" : `revoked ${at(key.revokedAt)}`,
  ].join("\t");
}
