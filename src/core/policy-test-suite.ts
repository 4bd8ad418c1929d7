import type { DelegationSpec } from "./delegate.js";
import type { JsonObject, JsonSchema } from "./json.js";
import type { Decision, ReasonCode } from "./verdict.js";

// The model of one `charter test` suite (docs/policy-testing.md "The test file"), as
// schemas/charter-test.schema.json admits it; the runner is policy-test.ts.

/** What one call expects; every field given must match, fields left out are not checked. */
export interface CaseExpectation {
  readonly decision: Decision;
  readonly reason?: ReasonCode;
  readonly requirement?: string;
  readonly approvers?: number;
  readonly rule?: string;
}

/** One expectation for every profile of the suite, or one per profile (the matrix form). */
export type CaseExpect = CaseExpectation | Readonly<Record<string, CaseExpectation>>;

/** One call and what it must get. */
export interface CallSpec {
  readonly tool?: string;
  readonly action?: string;
  readonly args?: JsonObject;
  /** Unix seconds; the suite's `now` when absent. */
  readonly now?: number;
  readonly expect: CaseExpect;
}

/** A case of one call, decided on its own (no state: no budgets, no earlier calls). */
export interface CallCase extends CallSpec {
  readonly name: string;
  /** The run the call belongs to: the labels it has seen (rules over the run are judged on them). */
  readonly run?: { readonly seen?: readonly string[] };
}

/** One call of a scenario: in a run (the scenario's own unless named) and a step of it. */
export interface ScenarioCall extends CallSpec {
  /** The run's name; default "main". Runs are the scenario's own, under its grant. */
  readonly run?: string;
  /** The step's tool call id; default one per call. Asked again, the step answers its held verdict. */
  readonly step?: string;
  /**
   * The approval the scenario's latest held call got is approved by these principals, in order
   * (as an operator would record their answers), and this call presents it.
   */
  readonly approvedBy?: readonly string[];
}

/**
 * A multi-call scenario: its calls decided in order on one state (one grant, its budgets and its
 * runs), through the stateful pipeline the server runs.
 */
export interface ScenarioCase {
  readonly name: string;
  readonly calls: readonly ScenarioCall[];
}

export type TestCase = CallCase | ScenarioCase;

/** Whether a case is a multi-call scenario. */
export function isScenario(c: TestCase): c is ScenarioCase {
  return "calls" in c;
}

/** Caveats a delegation adds to one action (named by action id or tool name). */
export interface SuiteCaveats {
  readonly constraints?: readonly JsonSchema[];
  readonly binds?: JsonObject;
}

/**
 * What the suite's grant hands on to a sub-agent (the core's DelegationSpec): actions and caveats
 * named by action id or tool name. The cases then run under the child grant.
 */
export interface SuiteDelegation extends Pick<
  DelegationSpec,
  "subject" | "purpose" | "allowed" | "approvalRequired" | "ttlSeconds" | "limits"
> {
  readonly caveats?: Readonly<Record<string, SuiteCaveats>>;
}

export interface SuiteGrant {
  /** One profile, or `profiles` for the matrix form (every case decided under each). */
  readonly profile?: string;
  readonly profiles?: readonly string[];
  readonly subject?: string;
  readonly owner?: string;
  readonly purpose?: string;
  readonly actions?: readonly string[];
  readonly shadow?: boolean;
  readonly delegate?: SuiteDelegation;
}

export interface TestSuite {
  readonly suite: string;
  readonly now: number;
  readonly grant: SuiteGrant;
  /** The grant must be refused with this code (a delegation's or the compose's); then no cases. */
  readonly expect?: { readonly refused: string };
  /** Tool names the grant's catalog must show callable, show as requiring approval, and leave out. */
  readonly catalog?: {
    readonly callable?: readonly string[];
    readonly requiresApproval?: readonly string[];
    readonly absent?: readonly string[];
  };
  readonly cases?: readonly TestCase[];
}

/** The profiles a suite is decided under, in its order. */
export function suiteProfiles(suite: TestSuite): readonly string[] {
  return suite.grant.profiles ?? (suite.grant.profile === undefined ? [] : [suite.grant.profile]);
}

/** The expectation for `profile`: the one for all, or its entry of the map (undefined without one). */
export function expectationFor(expect: CaseExpect, profile: string): CaseExpectation | undefined {
  if (isSingleExpectation(expect)) return expect;
  return Object.hasOwn(expect, profile) ? expect[profile] : undefined;
}

/** Whether `expect` is one expectation for every profile rather than a map per profile. */
export function isSingleExpectation(expect: CaseExpect): expect is CaseExpectation {
  return typeof (expect as { decision?: unknown }).decision === "string";
}
