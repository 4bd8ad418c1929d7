import { toJson } from "@bufbuild/protobuf";
import { catalogFor } from "../../authority/index.js";
import { CatalogViewSchema, type CatalogView } from "../../gen/charter/v1/common_pb.js";
import type { DialectName } from "../../interop/dialects/index.js";
import { DIALECT_TO_PROTO } from "../../interop/enums.js";
import { viewToProto } from "../../interop/view-codec.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { SERVER_FLAGS, serverAddress, withTarget, type Target } from "../target.js";

/**
 * `charter catalog`: prints the tool catalog a grant token gives, rendered for a framework (or
 * the neutral view with --view) — via --server, or offline; both print the same output.
 */
export async function catalogCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    token: { type: "string" },
    dialect: { type: "string" },
    view: { type: "boolean" },
    ...SERVER_FLAGS,
  });
  const token = values.token ?? io.env["CHARTER_TOKEN"];
  if (!token) throw new UsageError("--token (or CHARTER_TOKEN) is required");
  const dialect = (values.dialect ?? "neutral") as DialectName;
  if (!Object.hasOwn(DIALECT_TO_PROTO, dialect))
    throw new UsageError(`--dialect must be one of ${Object.keys(DIALECT_TO_PROTO).join(", ")}`);
  return withTarget(
    serverAddress(values.server, io, values["api-key"]),
    () => configFrom(values, io.env),
    io,
    async (target) => {
      const { view, toolsJson } = await catalogOn(target, token, dialect);
      io.out(
        JSON.stringify(
          values.view ? toJson(CatalogViewSchema, view) : (JSON.parse(toolsJson) as unknown),
          null,
          2,
        ),
      );
      return 0;
    },
  );
}

async function catalogOn(
  target: Target,
  grantToken: string,
  dialect: DialectName,
): Promise<{ view: CatalogView; toolsJson: string }> {
  if (target.kind === "server") {
    const { view, renderedToolsJson } = await target.clients.catalog.getCatalog({
      grantToken,
      dialect: DIALECT_TO_PROTO[dialect],
    });
    if (!view) throw new Error("the server answered no view");
    return { view, toolsJson: renderedToolsJson };
  }
  const answer = await catalogFor(target.ctx, { grantToken, dialect });
  return { view: viewToProto(answer.view), toolsJson: JSON.stringify(answer.tools) };
}
