import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { status, type ServiceError } from "@grpc/grpc-js";
import { AuthorizeTurnRequestSchema } from "../../src/gen/charter/v1/authority_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorDetails } from "../../src/client/index.js";
import { Decision, Dialect } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

let charter: TestCharter;
let token: string;
beforeAll(async () => {
  charter = await startTestCharter();
  ({ grantToken: token } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: "ana@example.com",
    purpose: "turns",
  }));
});
afterAll(async () => {
  await charter.stop();
});

const WS = { path: "/workspace/notes.md" };
const EXTERNAL = { to: "bob@partner.org", subject: "Offer", body: "Our offer." };
const ESCAPE = { path: "/etc/passwd" };

/** One turn per dialect, each with an allowed, a denied and an approval-requiring call, in that order. */
const TURNS = [
  {
    dialect: Dialect.OPENAI_CHAT,
    turn: {
      object: "chat.completion",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: { name: "read_file", arguments: JSON.stringify(WS) },
              },
              {
                id: "call_b",
                type: "function",
                function: { name: "read_file", arguments: JSON.stringify(ESCAPE) },
              },
              {
                id: "call_c",
                type: "function",
                function: { name: "send_email", arguments: JSON.stringify(EXTERNAL) },
              },
            ],
          },
        },
      ],
    },
    ids: ["call_a", "call_b", "call_c"],
    feedback: [
      {
        role: "tool",
        tool_call_id: "call_b",
        content: expect.stringContaining("Denied (CONSTRAINT_VIOLATION)") as unknown,
      },
      {
        role: "tool",
        tool_call_id: "call_c",
        content: expect.stringContaining(
          'needs the owner\'s approval (requirement "owner")',
        ) as unknown,
      },
    ],
  },
  {
    dialect: Dialect.OPENAI_RESPONSES,
    turn: {
      object: "response",
      output: [
        { type: "reasoning", id: "rs_1", summary: [] },
        {
          type: "function_call",
          id: "fc_a",
          call_id: "call_a",
          name: "read_file",
          arguments: JSON.stringify(WS),
        },
        {
          type: "function_call",
          id: "fc_b",
          call_id: "call_b",
          name: "delete_file",
          arguments: JSON.stringify(WS),
        },
        {
          type: "function_call",
          id: "fc_c",
          call_id: "call_c",
          name: "delete_email",
          arguments: JSON.stringify({ message_id: "msg_7f3a9c21ab", reason: "spam" }),
        },
      ],
    },
    ids: ["call_a", "call_b", "call_c"],
    feedback: [
      {
        type: "function_call_output",
        call_id: "call_b",
        output: expect.stringContaining("Denied (EXPLICIT_DENY)") as unknown,
      },
      {
        type: "function_call_output",
        call_id: "call_c",
        output: expect.stringContaining("approval") as unknown,
      },
    ],
  },
  {
    dialect: Dialect.ANTHROPIC,
    turn: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      content: [
        { type: "text", text: "On it." },
        {
          type: "tool_use",
          id: "toolu_a",
          name: "issue_refund",
          input: { order_id: "ord_A1B2C3", amount: 40, currency: "EUR", reason: "damaged" },
        },
        {
          type: "tool_use",
          id: "toolu_b",
          name: "issue_refund",
          input: { order_id: "ord_A1B2C3", amount: 6000, currency: "EUR", reason: "damaged" },
        },
        {
          type: "tool_use",
          id: "toolu_c",
          name: "issue_refund",
          input: { order_id: "ord_A1B2C3", amount: 250, currency: "EUR", reason: "damaged" },
        },
      ],
      stop_reason: "tool_use",
    },
    ids: ["toolu_a", "toolu_b", "toolu_c"],
    feedback: [
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_b",
            is_error: true,
            content: expect.stringContaining("Denied (RULE_DENY)") as unknown,
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_c",
            is_error: true,
            content: expect.stringContaining('requirement "manager"') as unknown,
          },
        ],
      },
    ],
  },
  {
    dialect: Dialect.GEMINI,
    turn: {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { functionCall: { name: "read_file", args: WS } },
              { functionCall: { name: "run_shell", args: { command: "ls" } } },
              { functionCall: { name: "send_email", args: EXTERNAL } },
            ],
          },
          finishReason: "STOP",
        },
      ],
    },
    ids: undefined,
    feedback: [
      {
        role: "user",
        parts: [
          {
            functionResponse: {
              name: "run_shell",
              response: { error: expect.stringContaining("Denied (EXPLICIT_DENY)") as unknown },
            },
          },
          {
            functionResponse: {
              name: "send_email",
              response: { error: expect.stringContaining("approval") as unknown },
            },
          },
        ],
      },
    ],
  },
] as const;

describe("AuthorityService.AuthorizeTurn over gRPC", () => {
  it.each(TURNS.map((t) => [Dialect[t.dialect], t] as const))(
    "decides a mixed %s turn and renders its feedback",
    async (_name, t) => {
      const res = await charter.clients.authority.authorizeTurn({
        grantToken: token,
        dialect: t.dialect,
        turnJson: JSON.stringify(t.turn),
      });
      expect(res.verdicts.map((v) => v.decision)).toEqual([
        Decision.ALLOW,
        Decision.DENY,
        Decision.REQUIRE_APPROVAL,
      ]);
      const ids = res.verdicts.map((v) => v.callId);
      if (t.ids) expect(ids).toEqual(t.ids);
      else for (const id of ids) expect(id).toMatch(/^gemini_[0-9a-f]{12}_\d$/); // Gemini sent none: derived, and returned
      expect(res.calls.map((c) => c.callId)).toEqual(ids);
      expect(res.verdicts[0]?.receipt).not.toBe("");
      expect(res.verdicts.slice(1).map((v) => v.receipt)).toEqual(["", ""]);
      expect(res.feedbackJson[0]).toBe("");
      expect(JSON.parse(res.renderedResultsJson)).toEqual(t.feedback);
      // Each decision went through the same pipeline as BatchAuthorize: recorded before the answer.
      for (const v of res.verdicts)
        expect(await charter.server.context.store.getDecision(v.decisionId)).toMatchObject({
          callId: v.callId,
        });
    },
  );

  it("gives the same derived ids for the same turn asked twice", async () => {
    const turn = JSON.stringify(TURNS[3].turn);
    const a = await charter.clients.authority.authorizeTurn({
      grantToken: token,
      dialect: Dialect.GEMINI,
      turnJson: turn,
    });
    const b = await charter.clients.authority.authorizeTurn({
      grantToken: token,
      dialect: Dialect.GEMINI,
      turnJson: turn,
    });
    expect(b.verdicts.map((v) => v.callId)).toEqual(a.verdicts.map((v) => v.callId));
  });

  it("answers an empty list for a turn without tool calls", async () => {
    const res = await charter.clients.authority.authorizeTurn({
      grantToken: token,
      dialect: Dialect.ANTHROPIC,
      turnJson: JSON.stringify({ role: "assistant", content: "Done." }),
    });
    expect(res.verdicts).toEqual([]);
    expect(res.renderedResultsJson).toBe("[]");
  });

  it.each([
    [
      "a malformed turn",
      Dialect.OPENAI_CHAT,
      JSON.stringify([{ id: "c", type: "function", function: {} }]),
      "openai_chat turn: tool_calls[0].function.name must be a non-empty string",
    ],
    ["text that is not JSON", Dialect.MCP, "{", "turn_json: is not valid JSON"],
    ["an empty turn", Dialect.MCP, "", "turn_json: is required"],
  ])(
    "refuses %s with INVALID_ARGUMENT naming turn_json, deciding nothing",
    async (_what, dialect, turnJson, message) => {
      const err = (await charter.clients.authority
        .authorizeTurn({ grantToken: token, dialect, turnJson })
        .catch((e: unknown) => e)) as ServiceError;
      expect(err.code).toBe(status.INVALID_ARGUMENT);
      expect(err.details).toContain(message);
      expect(errorDetails(err).fieldViolations.map((v) => v.field)).toEqual(["turn_json"]);
    },
  );

  it("refuses approval ids that name no call of the turn", async () => {
    const turnJson = JSON.stringify(TURNS[0].turn.choices[0].message);
    const err = (await charter.clients.authority
      .authorizeTurn({
        grantToken: token,
        dialect: Dialect.OPENAI_CHAT,
        turnJson,
        approvalIds: { call_zzz: "apr_1" },
      })
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain('approval_ids["call_zzz"]');
  });

  it("refuses a dialect this version does not know", async () => {
    // A value past every Dialect this version knows, as a newer client would send it (field 2, varint).
    const unknown = Math.max(...Object.values(Dialect).filter((v) => typeof v === "number")) + 1;
    const bytes = toBinary(
      AuthorizeTurnRequestSchema,
      create(AuthorizeTurnRequestSchema, { grantToken: token, turnJson: "[]" }),
    );
    const request = fromBinary(
      AuthorizeTurnRequestSchema,
      new Uint8Array([...bytes, 0x10, unknown]),
    );
    const err = (await charter.clients.authority
      .authorizeTurn(request)
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain(`dialect: unknown value ${String(unknown)}`);
  });

  it("answers a bad token with deny verdicts, as Authorize does", async () => {
    const turnJson = JSON.stringify(TURNS[0].turn);
    const res = await charter.clients.authority.authorizeTurn({
      grantToken: "not.a.token",
      dialect: Dialect.OPENAI_CHAT,
      turnJson,
    });
    expect(res.verdicts.map((v) => [v.decision, v.reason?.code])).toEqual([
      [Decision.DENY, "GRANT_INVALID"],
      [Decision.DENY, "GRANT_INVALID"],
      [Decision.DENY, "GRANT_INVALID"],
    ]);
  });
});
