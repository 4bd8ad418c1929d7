import { isLoadError } from "../../authority/index.js";
import { loadPolicySet } from "../../app/context.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, configFrom, parse } from "../options.js";

/** `charter validate`: loads catalog and policy and reports every problem. Exit 0 when both load. */
export async function validateCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, CONFIG_FLAGS);
  const config = await configFrom(values, io.env);
  try {
    const { catalog, policy } = await loadPolicySet(config);
    io.out(
      `ok: catalog ${catalog.version} (${catalog.actions.size} actions, ${catalog.tools.size} tools), ` +
        `policy ${policy.version} (${policy.sources.size} sources, ${policy.profiles.size} profiles)`,
    );
    return 0;
  } catch (err) {
    if (!isLoadError(err)) throw err;
    for (const p of err.problems)
      io.err(
        p.subject === undefined
          ? `${p.file}: ${p.message}`
          : `${p.file}: ${p.subject}: ${p.message}`,
      );
    io.err(`${err.problems.length} problem${err.problems.length === 1 ? "" : "s"} found`);
    return 1;
  }
}
