/**
 * A stand-in for a real model (no provider is needed to run the recipe): it asks for the planned
 * tool calls one per turn, and after a tool's result it answers with that result as text, so
 * what the model was told (a tool's output, Charter's reason, a rejection) is visible.
 */
import {
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";

/** One tool call the scripted model will ask for. */
export interface PlannedCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export interface ScriptedModel extends Model {
  /** What each turn was told: the tool results the model saw, in order. */
  readonly seen: string[];
  /** Queues calls for the next turns (one call per turn). */
  plan(...calls: PlannedCall[]): void;
}

export function scriptedModel(...calls: PlannedCall[]): ScriptedModel {
  const queue = [...calls];
  const seen: string[] = [];
  const counter = { next: 1 };
  const reply = (text: string): ModelResponse => ({
    usage: new Usage(),
    output: [
      {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text }],
      },
    ],
  });
  return {
    seen,
    plan(...more) {
      queue.push(...more);
    },
    async getResponse(request: ModelRequest) {
      const last = lastItem(request.input);
      if (last?.type === "function_call_result") {
        const output = textOf(last.output);
        seen.push(output);
        return reply(`${last.name} answered: ${output}`);
      }
      const call = queue.shift();
      if (call === undefined) return reply("Nothing left to do.");
      const callId = `call_${counter.next++}`;
      return {
        usage: new Usage(),
        output: [
          {
            type: "function_call",
            callId,
            name: call.name,
            arguments: JSON.stringify(call.args),
            status: "completed",
          },
        ],
      };
    },
    getStreamedResponse() {
      throw new Error("the scripted model does not stream");
    },
  };
}

function lastItem(input: string | AgentInputItem[]): AgentInputItem | undefined {
  return typeof input === "string" ? undefined : input.at(-1);
}

/** A tool result's text (the SDK sends a string result as `{type: "text", text}`). */
function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  if (typeof output === "object" && output !== null && "text" in output) return String(output.text);
  return JSON.stringify(output);
}
