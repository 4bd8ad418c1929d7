/**
 * The first rendering of a grant's catalog (what GetCatalog computes before its cache holds it),
 * in process, on generated catalogs of growing size with half the actions granted: projection,
 * narrowing, the dialect's rendering and the proto encoding (by `encodeMessage`, as the router
 * encodes the response; a view entry shared by every view is encoded once). Printed beside a baseline measured
 * in the same run (JSON.stringify of the granted tools' descriptors, the least any rendering must
 * do), and per granted action, so a superlinear step shows as a per-action cost that grows.
 *
 *   npm run bench:grpc-render
 */
import { create } from "@bufbuild/protobuf";
import { buildCatalog, type Catalog } from "../src/core/catalog.js";
import { compose } from "../src/core/compose.js";
import type { TaskGrant } from "../src/core/grant.js";
import { buildPolicy } from "../src/core/policy.js";
import { projectCatalog } from "../src/core/project.js";
import { GetCatalogResponseSchema } from "../src/gen/charter/v1/catalog_pb.js";
import { renderTools, toolsJson } from "../src/interop/dialects/index.js";
import { viewToProto } from "../src/interop/view-codec.js";
import { encodeMessage } from "../src/server/encode.js";
import { generatedDocuments } from "./grpc-catalog.js";
import { median } from "./grpc-h2load.js";

const SIZES = [100, 1000, 5000];
const REPEATS = Number(process.env["BENCH_REPEATS"] ?? 15);
const NOW = 1_800_000_000;

console.log(
  `first rendering (openai_chat), median of ${REPEATS}, fresh grant id each time; the goal is 1,000 actions / 500 granted within 2 ms`,
);
for (const size of SIZES) {
  const { catalog: catalogDoc, policy: policyDoc } = generatedDocuments(size, size / 2);
  const catalog = buildCatalog(catalogDoc, "generated");
  const policy = buildPolicy(policyDoc, catalog, "generated");
  const grantOf = (i: number): TaskGrant => {
    const composed = compose(
      { profile: "generated", subject: "agent:bench", owner: "ana", purpose: "bench" },
      policy,
      catalog,
      NOW,
      `grt_${i}`,
    );
    if (composed.kind !== "granted") throw new Error("the generated policy must compose");
    return composed.grant;
  };
  const rendered = (grant: TaskGrant) => {
    const view = projectCatalog(grant, catalog);
    return { view, json: toolsJson(renderTools(view, "openai_chat")) };
  };
  const encoded = (grant: TaskGrant) => {
    const { view, json } = rendered(grant);
    return encodeMessage(
      GetCatalogResponseSchema,
      create(GetCatalogResponseSchema, { view: viewToProto(view), renderedToolsJson: json }),
    ).length;
  };
  const floor = (grant: TaskGrant) =>
    JSON.stringify(grant.allowed.map((id) => toolOf(catalog, id))).length;
  encoded(grantOf(-1)); // warm the JIT once
  const render: number[] = [];
  const encode: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    baseline.push(timed(() => floor(grantOf(i))));
    render.push(timed(() => rendered(grantOf(i))));
    encode.push(timed(() => encoded(grantOf(i))));
  }
  const base = median(baseline);
  const show = (runs: number[]) =>
    `${median(runs).toFixed(2)} ms = ${((median(runs) * 1000) / (size / 2)).toFixed(2)} µs/granted, ${(median(runs) / base).toFixed(1)}x`;
  console.log(
    `${String(size).padStart(5)} actions / ${String(size / 2).padStart(4)} granted: rendered ${show(render)}; rendered + proto-encoded ${show(encode)}; baseline ${base.toFixed(2)} ms`,
  );
}

function toolOf(catalog: Catalog, id: string): unknown {
  return catalog.actions.get(id)?.tool;
}

function timed(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}
