import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter } from "../support/charter-server.js";

// Traces of a real server exported over OTLP/HTTP to a local receiver: the RPC span and, as its
// children, the pipeline stages.

interface OtlpSpan {
  readonly name: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly traceId: string;
  /** Unix nanoseconds, as OTLP/JSON writes them (decimal strings). */
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes?: readonly { key: string; value: { stringValue?: string } }[];
}

let receiver: Server;
let endpoint: string;
const received: { path: string; spans: OtlpSpan[]; service: string | undefined }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const doc = JSON.parse(body) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: { stringValue?: string } }[] };
          scopeSpans: { spans: OtlpSpan[] }[];
        }[];
      };
      for (const rs of doc.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value
          .stringValue;
        received.push({
          path: req.url ?? "",
          service,
          spans: rs.scopeSpans.flatMap((s) => s.spans),
        });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const address = receiver.address();
  endpoint = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/v1/traces`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe("tracing", () => {
  it("exports an Authorize's RPC span with load, decide, approval, commit and sign as its children, sign during commit", async () => {
    const charter = await startTestCharter({ config: { tracingOtlpEndpoint: endpoint } });
    try {
      const { grantToken } = await charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:t",
        owner: "ana@example.com",
        purpose: "trace",
      });
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: { callId: "t1", toolName: "web_search", argumentsJson: '{"query":"q"}' },
      });
      expect(verdict?.decision).toBe(Decision.ALLOW);
    } finally {
      await charter.stop(); // flushes the queued spans
    }
    expect(received.every((r) => r.path === "/v1/traces" && r.service === "charter")).toBe(true);
    const spans = received.flatMap((r) => r.spans);
    const rpc = spans.find(
      (s) =>
        s.name === "charter.rpc" &&
        s.attributes?.some(
          (a) => a.key === "rpc.method" && a.value.stringValue?.endsWith("/Authorize"),
        ),
    );
    expect(rpc).toBeDefined();
    const status = rpc?.attributes?.find((a) => a.key === "rpc.grpc.status_code")?.value
      .stringValue;
    expect(status).toBe("OK");
    const children = spans.filter(
      (s) => s.parentSpanId === rpc?.spanId && s.traceId === rpc?.traceId,
    );
    const steps = [
      "charter.load",
      "charter.decide",
      "charter.approval",
      "charter.commit",
      "charter.sign",
    ];
    expect(children.map((s) => s.name).sort()).toEqual([...steps].sort());
    const at = (name: string) => {
      const span = children.find((s) => s.name === name) as OtlpSpan;
      return { start: BigInt(span.startTimeUnixNano), end: BigInt(span.endTimeUnixNano) };
    };
    // They begin in pipeline order (start times may share a millisecond); the receipt is signed
    // while the commit is made durable, so sign begins before commit ends.
    steps
      .slice(1)
      .forEach((name, i) =>
        expect(at(name).start).toBeGreaterThanOrEqual(at(steps[i] as string).start),
      );
    expect(at("charter.sign").start).toBeLessThan(at("charter.commit").end);
  });
});
