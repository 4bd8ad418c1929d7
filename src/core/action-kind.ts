import type { ProblemList } from "./errors.js";
import { isJsonObject } from "./json.js";

/** What an action does once allowed: invoke a tool, start an agent, or run a graph node's operation. */
export type ActionKind = "tool" | "agent" | "operation";
export const ACTION_KINDS: readonly ActionKind[] = ["tool", "agent", "operation"];

/**
 * The kinds of graph operation this version knows. The union may grow: a kind not listed here
 * (a newer runtime's) is denied UNKNOWN_TARGET_KIND, never treated as one of these.
 */
export const OPERATION_KINDS = [
  "activity",
  "signal",
  "job",
  "owned_job",
  "subgraph",
  "agent",
  "fork",
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/** True when `kind` is an operation kind this version knows. */
export function isOperationKind(kind: unknown): kind is OperationKind {
  return typeof kind === "string" && (OPERATION_KINDS as readonly string[]).includes(kind);
}

/** The agent definition a start-agent action starts; an unset version accepts every version. */
export interface AgentDefinition {
  readonly name: string;
  readonly version?: string;
}

/** The graph operation an operation action runs: its definition id (by default the action id) and kind. */
export interface OperationDefinition {
  readonly definition: string;
  readonly kind: OperationKind;
}

/** An action's kind as the catalog declares it: a tool action declares neither. */
export interface ActionKindDeclaration {
  readonly agent?: AgentDefinition;
  readonly operation?: OperationDefinition;
}

/** The kind of a catalog action. */
export function actionKindOf(action: ActionKindDeclaration): ActionKind {
  return action.operation ? "operation" : action.agent ? "agent" : "tool";
}
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$/;

/**
 * Reads an action's `kind` (default `tool`) and, for `agent`, its `agent: {name, version?}`; for
 * `operation`, its `operation: {kind, definition?}`. A key of another kind is a load error.
 */
export function readActionKind(
  raw: Readonly<Record<string, unknown>>,
  id: string,
  problems: ProblemList,
): ActionKindDeclaration | undefined {
  const kind = raw["kind"] ?? "tool";
  if (typeof kind !== "string" || !(ACTION_KINDS as readonly string[]).includes(kind)) {
    problems.add(id, `kind must be one of ${ACTION_KINDS.join(", ")}`);
    return undefined;
  }
  if (kind !== "agent" && raw["agent"] !== undefined)
    problems.add(id, "`agent` is only for actions of kind agent");
  if (kind !== "operation" && raw["operation"] !== undefined)
    problems.add(id, "`operation` is only for actions of kind operation");
  if (kind === "agent") {
    const agent = raw["agent"];
    const name = isJsonObject(agent) ? agent["name"] : undefined;
    const version = isJsonObject(agent) ? agent["version"] : undefined;
    if (
      !isJsonObject(agent) ||
      Object.keys(agent).some((k) => k !== "name" && k !== "version") ||
      typeof name !== "string" ||
      !NAME.test(name)
    ) {
      problems.add(
        id,
        "an agent action needs `agent: {name, version?}` (a name of letters, digits and _ . : @ / -)",
      );
      return undefined;
    }
    if (version !== undefined && (typeof version !== "string" || version === "")) {
      problems.add(id, "agent version must be a non-empty string");
      return undefined;
    }
    return { agent: version === undefined ? { name } : { name, version } };
  }
  if (kind === "operation") {
    const op = raw["operation"];
    const opKind = isJsonObject(op) ? op["kind"] : undefined;
    const definition = (isJsonObject(op) ? op["definition"] : undefined) ?? id;
    if (
      !isJsonObject(op) ||
      Object.keys(op).some((k) => k !== "kind" && k !== "definition") ||
      !isOperationKind(opKind)
    ) {
      problems.add(
        id,
        `an operation action needs \`operation: {kind, definition?}\`, kind one of ${OPERATION_KINDS.join(", ")}`,
      );
      return undefined;
    }
    if (typeof definition !== "string" || !NAME.test(definition)) {
      problems.add(id, "operation definition must be an id (letters, digits and _ . : @ / -)");
      return undefined;
    }
    return { operation: { kind: opKind, definition } };
  }
  return {};
}
