import { projectCatalog } from "../../core/project.js";
import { renderTools, type DialectName } from "../../interop/dialects.js";
import { checkGrantToken } from "../../server/grant-check.js";
import type { CliIo } from "../io.js";
import { nowSeconds, openLocal } from "../local.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

const DIALECTS: readonly DialectName[] = ["neutral", "openai_chat", "openai_responses", "anthropic", "mcp", "gemini"];

/** `charter catalog`: prints the tool catalog a grant token gives, rendered for a framework. */
export async function catalogCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { ...CONFIG_FLAGS, token: { type: "string" }, dialect: { type: "string" }, view: { type: "boolean" } });
  const token = values.token ?? io.env["CHARTER_TOKEN"];
  if (!token) throw new UsageError("--token (or CHARTER_TOKEN) is required");
  const dialect = (values.dialect ?? "neutral") as DialectName;
  if (!DIALECTS.includes(dialect)) throw new UsageError(`--dialect must be one of ${DIALECTS.join(", ")}`);
  const config = await configFrom(values, io.env);
  const now = nowSeconds();
  const local = await openLocal(config, now);
  try {
    const check = await checkGrantToken(local, token, now);
    if (!check.ok) {
      io.err(`${check.code}: ${check.message}`);
      return 1;
    }
    const view = projectCatalog(check.grant, local.authority.catalog);
    io.out(JSON.stringify(values.view ? view : renderTools(view, dialect), null, 2));
    return 0;
  } finally {
    await local.close();
  }
}
