import { Ajv2020 } from "ajv/dist/2020.js";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppContext } from "../../src/app/context.js";
import {
  decideApproval,
  issueGrant,
  readAuditRecords,
  type AuditEntry,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { DEFAULT_LISTING_LIMITS } from "../../src/gateway/listing.js";
import { FIXTURES } from "../support/charter-server.js";
import { startRawGateway, type RawGateway } from "../support/raw-gateway.js";
import { startRecordingServer, type RecordingServer } from "../support/recording-mcp-server.js";

// End to end: the MCP SDK's real Client talks over stdio to `charter mcp-gateway` (dist/cli/bin.js,
// a real process), which fronts a real MCP server (the SDK's Server) that records every call it
// receives. Decisions are local: the catalog and policy files over a temp data dir.

const BIN = new URL("../../dist/cli/bin.js", import.meta.url).pathname;
const SERVED = ["read_file", "write_file", "delete_file", "send_email", "delete_email"];
const WS = { path: "/workspace/notes.md" };

let dataDir: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-gateway-"));
  const ctx = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
  });
  for (const profile of ["owner-assistant", "owner-assistant-dryrun"])
    tokens[profile] = (
      await issueGrant(ctx, { profile, subject: "agent-1", owner: "ana", purpose: "gateway test" })
    ).token;
  await ctx.close();
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function gatewayArgs(
  profile: string,
  upstream: Pick<RecordingServer, "url">,
  run?: string,
): string[] {
  return [
    BIN,
    "mcp-gateway",
    "--data-dir",
    dataDir,
    "--catalog",
    join(FIXTURES, "catalog.yaml"),
    "--policy",
    join(FIXTURES, "policy.yaml"),
    "--token",
    tokens[profile] ?? "",
    "--upstream-url",
    upstream.url,
    ...(run === undefined ? [] : ["--run", run]),
  ];
}

/** The SDK client connected through a spawned gateway; stderr collected. */
async function connect(
  profile: string,
  upstream: Pick<RecordingServer, "url">,
  run?: string,
  env: Record<string, string> = {},
): Promise<{ client: Client; stderr: () => string; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: gatewayArgs(profile, upstream, run),
    stderr: "pipe",
    env: { ...getDefaultEnvironment(), ...env },
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid ?? 0 };
}

const text = (r: CallToolResult) =>
  r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("charter mcp-gateway (real client, real gateway process, real upstream)", () => {
  let upstream: RecordingServer;
  let client: Client;
  beforeAll(async () => {
    upstream = await startRecordingServer({ tools: SERVED });
    ({ client } = await connect("owner-assistant", upstream));
  });
  afterAll(async () => {
    await client.close();
    await upstream.stop();
  });

  it("lists only the upstream's tools the grant holds, approval-requiring ones marked", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "delete_email",
      "read_file",
      "send_email",
      "write_file",
    ]);
    expect(JSON.stringify(tools)).not.toContain("internal_admin"); // not in the catalog
    expect(JSON.stringify(tools)).not.toContain("delete_file"); // denied by the policy
    expect(tools.find((t) => t.name === "delete_email")?.description).toContain(
      "Requires the owner's approval",
    );
    // The grant's narrowed schema is what the agent sees.
    // The workspace constraint reaches the model in the schema it is shown: a path outside it does not validate.
    const shown = new Ajv2020({ strict: false }).compile(
      tools.find((t) => t.name === "read_file")?.inputSchema ?? false,
    );
    expect([shown({ path: "/workspace/notes.md" }), shown({ path: "/etc/passwd" })]).toEqual([
      true,
      false,
    ]);
  });

  it("forwards an allowed call to the upstream and passes its result back", async () => {
    const before = upstream.calls.length;
    const result = (await client.callTool({ name: "read_file", arguments: WS })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("ran read_file");
    expect(upstream.calls.slice(before)).toEqual([{ name: "read_file", arguments: WS }]);
  });

  it("answers a denied call with an isError result; the upstream never sees it", async () => {
    const before = upstream.calls.length;
    const result = (await client.callTool({
      name: "write_file",
      arguments: { path: "/etc/passwd", content: "x" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("Denied (CONSTRAINT_VIOLATION)");
    expect(upstream.calls.length).toBe(before);
  });

  it("answers a tool the grant does not hold with JSON-RPC -32602; the upstream never sees it", async () => {
    const before = upstream.calls.length;
    for (const name of ["delete_file", "internal_admin", "no_such_tool"]) {
      const err = await client.callTool({ name, arguments: WS }).catch((e: unknown) => e);
      expect(err instanceof McpError && err.code === -32602, name).toBe(true);
    }
    expect(upstream.calls.length).toBe(before);
  });

  it("holds a call that needs approval: an isError result naming the requirement, never forwarded", async () => {
    const before = upstream.calls.length;
    const result = (await client.callTool({
      name: "send_email",
      arguments: { to: "bob@partner.org", subject: "Offer", body: "Hi" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('needs the owner\'s approval (requirement "owner")');
    expect(upstream.calls.length).toBe(before);
  });

  it("approval flow: held naming the approval id, the owner approves, the same call again reaches the upstream once", async () => {
    const call = {
      name: "send_email",
      arguments: { to: "bob@partner.org", subject: "Contract", body: "Signed copy attached" },
    };
    const before = upstream.calls.length;
    const held = (await client.callTool(call)) as CallToolResult;
    expect(held.isError).toBe(true);
    const approvalId = /Approval id: (apr_[0-9a-f-]+)\./.exec(text(held))?.[1];
    expect(approvalId).toBeDefined();
    // The owner decides on the data dir the gateway decides on (what `charter approvals approve` does offline).
    const owner = await createAppContext({
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
    });
    try {
      expect(
        await decideApproval(owner, {
          approvalId: approvalId ?? "",
          outcome: "approve",
          decidedBy: "ana",
          note: "ok",
        }),
      ).toMatchObject({ status: "approved" });
    } finally {
      await owner.close();
    }
    const retried = (await client.callTool(call)) as CallToolResult;
    expect(retried.isError).toBeFalsy();
    expect(text(retried)).toBe("ran send_email");
    expect(upstream.calls.slice(before)).toEqual([call]);
    // The approval was used: the same call again is held for a new one, and the upstream sees nothing more.
    const again = (await client.callTool(call)) as CallToolResult;
    expect(again.isError).toBe(true);
    expect(text(again)).toContain("Approval id: apr_");
    expect(text(again)).not.toContain(approvalId ?? "");
    expect(upstream.calls.slice(before)).toEqual([call]);
  });

  it("a new gateway process per call (as the MCP Inspector does): the approved call reaches the upstream once, no id kept", async () => {
    const call = {
      name: "send_email",
      arguments: { to: "bob@partner.org", subject: "Contract", body: "From a new process" },
    };
    const before = upstream.calls.length;
    const first = await connect("owner-assistant", upstream);
    const held = (await first.client.callTool(call)) as CallToolResult;
    await first.client.close();
    const approvalId = /Approval id: (apr_[0-9a-f-]+)\./.exec(text(held))?.[1] ?? "";
    const owner = await createAppContext({
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
    });
    try {
      await decideApproval(owner, { approvalId, outcome: "approve", decidedBy: "ana", note: "" });
    } finally {
      await owner.close();
    }
    const second = await connect("owner-assistant", upstream);
    try {
      const retried = (await second.client.callTool(call)) as CallToolResult;
      expect(text(retried)).toBe("ran send_email");
      const again = (await second.client.callTool(call)) as CallToolResult;
      expect(again.isError).toBe(true);
    } finally {
      await second.client.close();
    }
    expect(upstream.calls.slice(before)).toEqual([call]);
  });
});

describe("charter mcp-gateway in a dry run", () => {
  it("never forwards a call and never answers with a made-up success", async () => {
    const upstream = await startRecordingServer({ tools: SERVED });
    const { client } = await connect("owner-assistant-dryrun", upstream);
    try {
      const result = (await client.callTool({
        name: "read_file",
        arguments: WS,
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("Not run (SHADOW_MODE)");
      expect(upstream.calls).toEqual([]);
    } finally {
      await client.close();
      await upstream.stop();
    }
  });
});

describe("charter mcp-gateway tool pinning", () => {
  it("hides an upstream tool whose description changed, refuses its calls and says so on stderr", async () => {
    const upstream = await startRecordingServer({ tools: SERVED, rugPull: "write_file" });
    const { client, stderr } = await connect("owner-assistant", upstream);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("write_file");
      expect(tools.map((t) => t.name)).toContain("read_file");
      const result = (await client.callTool({
        name: "write_file",
        arguments: { path: "/workspace/a.txt", content: "x" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('the upstream tool "write_file" differs from the catalog');
      expect(upstream.calls).toEqual([]);
      expect(stderr()).toContain('tool pinning: the upstream tool "write_file" differs');
    } finally {
      await client.close();
      await upstream.stop();
    }
    // Local mode: the refusal is on the data dir's audit log too.
    const ctx = await createAppContext({
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
    });
    try {
      const pins: AuditEntry[] = [];
      for await (const r of readAuditRecords(ctx))
        if (r.entry.kind === "gateway.pin_refused") pins.push(r.entry);
      expect(pins.length).toBeGreaterThan(0);
      expect(pins[0]).toMatchObject({
        toolName: "write_file",
        detail: expect.stringContaining('the upstream tool "write_file" differs') as unknown,
      });
    } finally {
      await ctx.close();
    }
  }, 60_000); // a spawned gateway, then the data dir: slow on a busy machine
});

/** A process's resident set, in bytes (Linux). */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await f();
  return [value, performance.now() - start];
}

describe("charter mcp-gateway pins that hold against a hostile upstream", () => {
  it.each(["altered-first", "exact-first"] as const)(
    "refuses a name the upstream lists twice (%s): withheld, calls refused, logged",
    async (order) => {
      const upstream = await startRecordingServer({
        tools: SERVED,
        duplicate: { tool: "write_file", order },
      });
      const { client, stderr } = await connect("owner-assistant", upstream);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).not.toContain("write_file");
        expect(names).toContain("read_file");
        const result = (await client.callTool({
          name: "write_file",
          arguments: { path: "/workspace/a.txt", content: "x" },
        })) as CallToolResult;
        expect(result.isError).toBe(true);
        expect(text(result)).toContain(
          'Refused: the upstream lists the tool "write_file" 2 times (a tool name must be listed once); the name is refused',
        );
        expect(upstream.calls).toEqual([]);
        expect(stderr()).toContain(
          'tool pinning: the upstream lists the tool "write_file" 2 times',
        );
      } finally {
        await client.close();
        await upstream.stop();
      }
    },
    60_000,
  );

  it("checks every call against the tool served now: a change without list_changed gets no call, the agent is told", async () => {
    const upstream = await startRecordingServer({ tools: SERVED });
    const { client, stderr } = await connect("owner-assistant", upstream);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("read_file");
      expect(
        ((await client.callTool({ name: "read_file", arguments: WS })) as CallToolResult).isError,
      ).toBeFalsy();
      expect(upstream.calls).toHaveLength(1);

      upstream.rugPull("read_file"); // no notifications/tools/list_changed
      const refused = (await client.callTool({
        name: "read_file",
        arguments: WS,
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain(
        'Refused: the upstream tool "read_file" differs from the catalog',
      );
      expect(upstream.calls).toHaveLength(1);
      expect(stderr()).toContain('tool pinning: the upstream tool "read_file" differs');
      await expect.poll(() => changed).toBe(1);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("read_file");

      upstream.rugPull(undefined); // the catalog's descriptor again
      expect(
        ((await client.callTool({ name: "read_file", arguments: WS })) as CallToolResult).isError,
      ).toBeFalsy();
      expect(upstream.calls).toHaveLength(2);
    } finally {
      await client.close();
      await upstream.stop();
    }
  });

  it("costs one upstream listing per call (measured: gateway call latency with the check vs without it)", async () => {
    const upstream = await startRecordingServer({ tools: SERVED });
    const { client } = await connect("owner-assistant", upstream);
    const direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    try {
      const N = 30;
      for (let i = 0; i < 5; i++) await client.callTool({ name: "read_file", arguments: WS }); // warm up
      const listsBefore = upstream.lists();
      const calls: number[] = [];
      for (let i = 0; i < N; i++)
        calls.push((await timed(() => client.callTool({ name: "read_file", arguments: WS })))[1]);
      expect(upstream.lists() - listsBefore).toBe(N); // one listing (one page) per call
      const listings: number[] = [];
      for (let i = 0; i < N; i++) listings.push((await timed(() => direct.listTools()))[1]);
      const withCheck = median(calls);
      const listing = median(listings);
      console.log(
        `gateway call, median of ${N}: ${withCheck.toFixed(2)} ms with the per-call pin check; ` +
          `one upstream listing ${listing.toFixed(2)} ms; without the check ≈ ${(withCheck - listing).toFixed(2)} ms; ` +
          `ratio with/without ≈ ${(withCheck / (withCheck - listing)).toFixed(2)}`,
      );
    } finally {
      await direct.close();
      await client.close();
      await upstream.stop();
    }
  }, 60_000);

  describe.each([
    {
      bound: "bytes",
      env: {},
      endless: { toolsPerPage: 4, descriptionBytes: 256 * 1024 },
      problem: `is larger than ${DEFAULT_LISTING_LIMITS.maxBytes} bytes (gatewayMaxListBytes)`,
    },
    {
      bound: "pages",
      env: { CHARTER_GATEWAY_MAX_LIST_PAGES: "8" },
      endless: { toolsPerPage: 1, descriptionBytes: 8 },
      problem: "has more than 8 pages (gatewayMaxListPages)",
    },
    {
      bound: "tools",
      env: { CHARTER_GATEWAY_MAX_LIST_TOOLS: "50" },
      endless: { toolsPerPage: 20, descriptionBytes: 8 },
      problem: "has more than 50 tools (gatewayMaxListTools)",
    },
    {
      bound: "time",
      env: {
        CHARTER_GATEWAY_LIST_TIMEOUT_MS: "300",
        CHARTER_GATEWAY_MAX_LIST_PAGES: "1000000",
        CHARTER_GATEWAY_MAX_LIST_TOOLS: "1000000",
        CHARTER_GATEWAY_MAX_LIST_BYTES: "1000000000",
      },
      endless: { toolsPerPage: 1, descriptionBytes: 8 },
      problem: "took more than 300 ms (gatewayListTimeoutMs)",
    },
  ])(
    "an upstream whose nextCursor never ends, bounded by $bound",
    ({ bound, env, endless, problem }) => {
      it("fails the listing closed with a clear error, in bounded time and memory; no call forwarded", async () => {
        const upstream = await startRecordingServer({ tools: SERVED, endless });
        const { client, stderr, pid } = await connect("owner-assistant", upstream, undefined, env);
        try {
          const baseline = rssOf(pid);
          const times: number[] = [];
          const rounds = 5;
          for (let i = 0; i < rounds; i++) {
            const [err, listMs] = await timed(() => client.listTools().catch((e: unknown) => e));
            expect(err).toBeInstanceOf(McpError);
            expect((err as McpError).message).toContain(`the upstream's tool listing ${problem}`);
            expect((err as McpError).message).toContain("no tool is shown");
            const [result, callMs] = await timed(
              async () =>
                (await client.callTool({ name: "read_file", arguments: WS })) as CallToolResult,
            );
            expect(result.isError).toBe(true);
            expect(text(result)).toContain(`Refused: the upstream's tool listing ${problem}`);
            times.push(listMs, callMs);
          }
          expect(upstream.calls).toEqual([]);
          expect(stderr()).toContain(`charter mcp-gateway: the upstream's tool listing ${problem}`);
          const growth = rssOf(pid) / baseline;
          console.log(
            `endless nextCursor (${bound}): ${upstream.lists()} pages served over ${rounds * 2} requests; ` +
              `slowest request ${Math.max(...times).toFixed(0)} ms; gateway RSS ${(baseline / 2 ** 20).toFixed(0)} -> ` +
              `${(rssOf(pid) / 2 ** 20).toFixed(0)} MiB (x${growth.toFixed(2)})`,
          );
          expect(Math.max(...times)).toBeLessThan(5_000);
          // The finding grew 125 -> 523 MB in 10 s. Bounded, a listing still holds up to
          // gatewayMaxListBytes (4 MiB) of text and what it parses to until it is refused, and a
          // loaded machine collects late: the bound is on the growth, not on a ratio of a small base.
          expect(rssOf(pid) - baseline).toBeLessThan(100 * 2 ** 20);
        } finally {
          await client.close();
          await upstream.stop();
        }
      }, 60_000);
    },
  );
});

describe("charter mcp-gateway on the raw wire", () => {
  let upstream: RecordingServer;
  let gateway: RawGateway;
  const next = () => gateway.next();
  const send = (value: unknown) => gateway.send(value);

  beforeAll(async () => {
    upstream = await startRecordingServer({ tools: SERVED });
    gateway = await startRawGateway(gatewayArgs("owner-assistant", upstream));
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.stop();
  });

  it("keeps each JSON-RPC id's type: a string id stays a string, a number a number", async () => {
    send({
      jsonrpc: "2.0",
      id: "42",
      method: "tools/call",
      params: { name: "read_file", arguments: WS },
    });
    expect(await next()).toMatchObject({
      id: "42",
      result: { content: [{ text: "ran read_file" }] },
    });
    send({
      jsonrpc: "2.0",
      id: 42,
      method: "tools/call",
      params: { name: "write_file", arguments: { path: "/tmp/x", content: "" } },
    });
    expect(await next()).toMatchObject({ id: 42, result: { isError: true } });
  });

  it("answers a JSON-RPC batch element by element with errors and forwards none of it", async () => {
    const before = upstream.calls.length;
    send([
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read_file", arguments: WS } },
      {
        jsonrpc: "2.0",
        id: "two",
        method: "tools/call",
        params: { name: "delete_file", arguments: WS },
      },
      {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: 1, progress: 1 },
      },
    ]);
    const reply = (await next()) as { id: unknown; error: { code: number } }[];
    expect(reply.map((r) => [r.id, r.error.code])).toEqual([
      [1, -32600],
      ["two", -32600],
    ]);
    expect(upstream.calls.length).toBe(before);
  });

  it("answers a line that is not JSON with a parse error, and one that is not JSON-RPC with Invalid Request", async () => {
    send("{not json");
    expect(await next()).toMatchObject({ id: null, error: { code: -32700 } });
    send({ id: 9, method: "tools/call" });
    expect(await next()).toMatchObject({ id: 9, error: { code: -32600 } });
  });
});

describe("charter mcp-gateway decides in a run: one per session, or the one --run names", () => {
  const FETCH = { name: "fetch_url", arguments: { url: "https://news.example.org/today" } };
  const READ = { name: "read_email", arguments: { message_id: "msg_7f3a9c21" } };
  const SEND = {
    name: "send_email",
    arguments: { to: "bo@example.com", subject: "Notes", body: "As promised" },
  };
  let upstream: RecordingServer;
  beforeAll(async () => {
    upstream = await startRecordingServer({ tools: ["fetch_url", "read_email", "send_email"] });
  });
  afterAll(() => upstream.stop());

  it("holds internal mail after the session read the web and the owner's mail; a new session starts clean", async () => {
    const first = await connect("owner-assistant", upstream);
    try {
      for (const call of [FETCH, READ])
        expect(((await first.client.callTool(call)) as CallToolResult).isError).toBeFalsy();
      const before = upstream.calls.length;
      const held = (await first.client.callTool(SEND)) as CallToolResult;
      expect(held.isError).toBe(true);
      expect(text(held)).toContain(
        "Not run yet (RUN_RULE): This run has read untrusted content (fetch_url, call 1) and private data (read_email, call 2)",
      );
      expect(upstream.calls.length).toBe(before);
    } finally {
      await first.client.close();
    }
    const second = await connect("owner-assistant", upstream);
    try {
      const sent = (await second.client.callTool(SEND)) as CallToolResult;
      expect(sent.isError).toBeFalsy();
      expect(text(sent)).toBe("ran send_email");
    } finally {
      await second.client.close();
    }
  }, 60_000);

  it("a run named with --run spans sessions", async () => {
    const run = `gw-run-${Date.now()}`;
    const first = await connect("owner-assistant", upstream, run);
    try {
      for (const call of [FETCH, READ]) await first.client.callTool(call);
    } finally {
      await first.client.close();
    }
    const second = await connect("owner-assistant", upstream, run);
    try {
      const held = (await second.client.callTool(SEND)) as CallToolResult;
      expect(held.isError).toBe(true);
      expect(text(held)).toContain("RUN_RULE");
    } finally {
      await second.client.close();
    }
  }, 60_000);
});
