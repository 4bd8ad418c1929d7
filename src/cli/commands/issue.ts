import { compose } from "../../core/compose.js";
import { randomUUID } from "node:crypto";
import { signGrantToken } from "../../token/index.js";
import { toJson } from "@bufbuild/protobuf";
import { GrantSchema, GrantMode } from "../../gen/charter/v1/common_pb.js";
import type { CliIo } from "../io.js";
import { nowSeconds, openLocal } from "../local.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { serverAddress, withServer } from "../remote.js";

/**
 * `charter issue`: composes a grant for a profile and prints its token — through a running
 * server's IssueGrant with --server, or offline on the data dir (the server's store and keys).
 */
export async function issueCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    profile: { type: "string" },
    subject: { type: "string" },
    owner: { type: "string" },
    purpose: { type: "string" },
    action: { type: "string", multiple: true },
    ttl: { type: "string" },
    shadow: { type: "boolean" },
    json: { type: "boolean" },
    server: { type: "string" },
  });
  if (!values.profile) throw new UsageError("--profile is required");
  const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
  if (ttl !== undefined && !(Number.isSafeInteger(ttl) && ttl > 0)) throw new UsageError("--ttl must be a positive number of seconds");
  const address = serverAddress(values.server, io);
  if (address !== undefined) {
    return withServer(address, io, async (clients) => {
      const { grant, grantToken } = await clients.grants.issueGrant({
        profile: values.profile as string,
        subject: values.subject ?? "agent:cli",
        owner: values.owner ?? "owner:cli",
        purpose: values.purpose ?? "",
        requestedActions: values.action ?? [],
        ...(ttl === undefined ? {} : { ttlSeconds: BigInt(ttl) }),
        ...(values.shadow ? { mode: GrantMode.SHADOW } : {}),
      });
      io.out(values.json && grant ? JSON.stringify({ grant: toJson(GrantSchema, grant), token: grantToken }, null, 2) : grantToken);
      return 0;
    });
  }
  const config = await configFrom(values, io.env);
  const now = nowSeconds();
  const local = await openLocal(config, now);
  try {
    const { catalog, policy } = local.authority;
    const result = compose(
      {
        profile: values.profile,
        subject: values.subject ?? "agent:cli",
        owner: values.owner ?? "owner:cli",
        purpose: values.purpose ?? "",
        requestedActions: values.action ?? [],
        ...(ttl === undefined ? {} : { ttlSeconds: ttl }),
        ...(values.shadow ? { mode: "shadow" as const } : {}),
      },
      policy,
      catalog,
      now,
      `grt_${randomUUID()}`,
    );
    if (result.kind === "unknown_action") {
      io.err(`cannot issue: ${result.source} names action "${result.actionId}", which the catalog lacks`);
      return 1;
    }
    if (result.kind === "denied") {
      io.err(`cannot issue: ${result.code}: ${result.message}`);
      return 1;
    }
    await local.store.putGrant(result.grant);
    const token = await signGrantToken(result.grant, local.ring, { issuer: config.issuer, audience: config.audience });
    io.out(values.json ? JSON.stringify({ grant: result.grant, token }, null, 2) : token);
    return 0;
  } finally {
    await local.close();
  }
}
