import { projectCatalog } from "../../core/project.js";
import { renderTools, type DialectName } from "../../interop/dialects.js";
import { checkGrantToken } from "../../server/grant-check.js";
import { toJson } from "@bufbuild/protobuf";
import { CatalogViewSchema } from "../../gen/charter/v1/common_pb.js";
import { DIALECT_TO_PROTO } from "../../interop/enums.js";
import type { CliIo } from "../io.js";
import { nowSeconds, openLocal } from "../local.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { serverAddress, withServer } from "../remote.js";

/** `charter catalog`: prints the tool catalog a grant token gives, rendered for a framework (via --server, or offline). */
export async function catalogCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { ...CONFIG_FLAGS, token: { type: "string" }, dialect: { type: "string" }, view: { type: "boolean" }, server: { type: "string" } });
  const token = values.token ?? io.env["CHARTER_TOKEN"];
  if (!token) throw new UsageError("--token (or CHARTER_TOKEN) is required");
  const dialect = (values.dialect ?? "neutral") as DialectName;
  if (!Object.hasOwn(DIALECT_TO_PROTO, dialect)) throw new UsageError(`--dialect must be one of ${Object.keys(DIALECT_TO_PROTO).join(", ")}`);
  const address = serverAddress(values.server, io);
  if (address !== undefined) {
    return withServer(address, io, async (clients) => {
      const { view, renderedToolsJson } = await clients.catalog.getCatalog({ grantToken: token, dialect: DIALECT_TO_PROTO[dialect] });
      io.out(values.view && view ? JSON.stringify(toJson(CatalogViewSchema, view), null, 2) : JSON.stringify(JSON.parse(renderedToolsJson), null, 2));
      return 0;
    });
  }
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
