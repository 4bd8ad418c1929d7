import { create } from "@bufbuild/protobuf";
import { catalogFor, type AuthorityContext, type CatalogAnswer } from "../../authority/index.js";
import {
  GetCatalogResponseSchema,
  type CatalogService,
  type GetCatalogResponse,
} from "../../gen/charter/v1/catalog_pb.js";
import { DecodeError } from "../../interop/decode-error.js";
import { dialectFromProto } from "../../interop/enums.js";
import { viewToProto } from "../../interop/view-codec.js";
import type { ServiceHandlers } from "../router.js";

/**
 * GetCatalog: the grant projected onto the catalog, rendered for the worker's framework. The
 * application layer answers a cached answer with the same object, so its response message is
 * kept beside it (and the router keeps that message's bytes): a cached GetCatalog is encoded once.
 */
export function getCatalog(
  ctx: AuthorityContext,
): ServiceHandlers<typeof CatalogService>["getCatalog"] {
  const responses = new WeakMap<CatalogAnswer, GetCatalogResponse>();
  return async (req) => {
    const dialect = dialectFromProto(req.dialect);
    if (dialect === undefined)
      throw new DecodeError("dialect", `unknown value ${String(req.dialect)}`);
    const answer = await catalogFor(ctx, {
      grantToken: req.grantToken,
      dialect,
      ...(req.runId === "" ? {} : { runId: req.runId }),
    });
    let response = responses.get(answer);
    if (response === undefined) {
      response = create(GetCatalogResponseSchema, {
        view: viewToProto(answer.view),
        renderedToolsJson: answer.toolsJson,
      });
      responses.set(answer, response);
    }
    return response;
  };
}
