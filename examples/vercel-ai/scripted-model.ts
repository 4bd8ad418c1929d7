/**
 * A stand-in for a real model (the AI SDK's `MockLanguageModelV3`, no provider needed): it asks
 * for the planned tool calls one per turn, and after a tool's result it answers with that result
 * as text, so what the model was told (a tool's output, Charter's reason, a denial) is visible.
 */
import { MockLanguageModelV3 } from "ai/test";

/** One tool call the scripted model will ask for. */
export interface PlannedCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export interface ScriptedModel {
  readonly model: MockLanguageModelV3;
  /** The tool results the model saw, in order. */
  readonly seen: string[];
  /** Queues calls for the next turns (one call per turn). */
  plan(...calls: PlannedCall[]): void;
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

export function scriptedModel(...calls: PlannedCall[]): ScriptedModel {
  const queue = [...calls];
  const seen: string[] = [];
  const counter = { next: 1 };
  const text = (value: string) => ({
    content: [{ type: "text" as const, text: value }],
    finishReason: { unified: "stop" as const, raw: "stop" },
    usage: USAGE,
    warnings: [],
  });
  const model = new MockLanguageModelV3({
    async doGenerate({ prompt }) {
      const last = prompt.at(-1);
      const result = last?.role === "tool" ? last.content.at(-1) : undefined;
      if (result?.type === "tool-result") {
        const output = textOf(result.output);
        seen.push(output);
        return text(`${result.toolName} answered: ${output}`);
      }
      const call = queue.shift();
      if (call === undefined) return text("Nothing left to do.");
      return {
        content: [
          {
            type: "tool-call" as const,
            toolCallId: `call_${counter.next++}`,
            toolName: call.name,
            input: JSON.stringify(call.args),
          },
        ],
        finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  return {
    model,
    seen,
    plan(...more) {
      queue.push(...more);
    },
  };
}

/** A tool result's text as the model would read it. */
function textOf(output: { type: string; value?: unknown; reason?: string }): string {
  if (output.type === "execution-denied") return output.reason ?? "denied";
  return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
}
