import { compose } from "../../core/compose.js";
import { decide } from "../../core/decide.js";
import type { TaskGrant } from "../../core/grant.js";
import type { Decision } from "../../core/verdict.js";
import { checkGrantToken } from "../../server/grant-check.js";
import { toJson } from "@bufbuild/protobuf";
import { VerdictSchema } from "../../gen/charter/v1/common_pb.js";
import { decisionFromProto } from "../../interop/enums.js";
import type { CliIo } from "../io.js";
import { nowSeconds, openLocal } from "../local.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { serverAddress, withServer } from "../remote.js";

/** Exit codes of `charter check`, one per decision. */
export const CHECK_EXIT: Readonly<Record<Decision, number>> = { allow: 0, deny: 1, require_approval: 2, effect_suppressed: 3 };

/**
 * `charter check`: decides one call offline, under a grant token (--token) or a grant composed
 * on the spot for a profile (--profile); with --server, the running server's Authorize decides
 * under --token. Prints the verdict; the exit code is the decision.
 */
export async function checkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    token: { type: "string" },
    profile: { type: "string" },
    tool: { type: "string" },
    action: { type: "string" },
    args: { type: "string" },
    server: { type: "string" },
  });
  if (values.token !== undefined && values.profile !== undefined) throw new UsageError("give --token or --profile, not both");
  // CHARTER_TOKEN stands in for --token unless a profile is named.
  const token = values.token ?? (values.profile === undefined ? io.env["CHARTER_TOKEN"] : undefined);
  if (token === undefined && values.profile === undefined) throw new UsageError("--token (or CHARTER_TOKEN) or --profile is required");
  if (values.tool === undefined && values.action === undefined) throw new UsageError("--tool or --action is required");
  let parsedArgs: unknown;
  try {
    parsedArgs = JSON.parse(values.args ?? "{}");
  } catch {
    throw new UsageError("--args must be JSON text, e.g. '{\"to\":\"a@example.com\"}'");
  }
  const address = serverAddress(values.server, io);
  if (address !== undefined) {
    if (token === undefined) throw new UsageError("--server needs --token (or CHARTER_TOKEN)");
    return withServer(address, io, async (clients) => {
      const { verdict } = await clients.authority.authorize({
        grantToken: token,
        call: { callId: "cli", toolName: values.tool ?? "", actionId: values.action ?? "", argumentsJson: JSON.stringify(parsedArgs) },
      });
      const decision = verdict ? decisionFromProto(verdict.decision) : undefined;
      if (!verdict || decision === undefined) throw new Error("the server answered no decision");
      io.out(JSON.stringify(toJson(VerdictSchema, verdict), null, 2));
      return CHECK_EXIT[decision];
    });
  }
  const config = await configFrom(values, io.env);
  const now = nowSeconds();
  const local = await openLocal(config, now);
  try {
    const { catalog, policy } = local.authority;
    let grant: TaskGrant;
    if (token !== undefined) {
      const check = await checkGrantToken(local, token, now);
      if (!check.ok) {
        io.out(JSON.stringify({ decision: "deny", reason: { code: check.code, message: check.message } }, null, 2));
        return CHECK_EXIT.deny;
      }
      grant = check.grant;
    } else {
      const result = compose({ profile: values.profile as string, subject: "agent:cli", owner: "owner:cli", purpose: "check" }, policy, catalog, now, "grt_check");
      if (result.kind !== "granted") {
        io.err(`cannot compose a grant for profile "${values.profile}": ${JSON.stringify(result)}`);
        return 64;
      }
      grant = result.grant;
    }
    const verdict = decide(grant, catalog, {
      callId: "cli",
      arguments: parsedArgs,
      ...(values.tool === undefined ? {} : { toolName: values.tool }),
      ...(values.action === undefined ? {} : { actionId: values.action }),
    }, { now });
    io.out(JSON.stringify(verdict, null, 2));
    return CHECK_EXIT[verdict.decision];
  } finally {
    await local.close();
  }
}
