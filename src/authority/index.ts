// The application layer's public surface: the only way the server and the CLI reach the core,
// the token layer and the store.

export {
  API_KEY_PREFIX,
  ROLES,
  apiKeySecretHash,
  authenticateApiKey,
  createApiKey,
  hasApiKeys,
  isRole,
  listApiKeys,
  revokeApiKey,
} from "./api-keys.js";
export type { CreatedApiKey, Principal, Role } from "./api-keys.js";
export { authorize, authorizeBatch } from "./authorize.js";
export type {
  AuthorizeBatchRequest,
  AuthorizeRequest,
  Decided,
  RequestOptions,
} from "./authorize.js";
export { authorizeTurn } from "./authorize-turn.js";
export { reportResult } from "./report-result.js";
export { MAX_STEP_ID_LENGTH } from "../core/step.js";
export type { ReportResultRequest } from "./report-result.js";
export type { AuthorizeTurnRequest, TurnAnswer, TurnCallAnswer } from "./authorize-turn.js";
export {
  DEFAULT_APPROVAL_PAGE_SIZE,
  MAX_APPROVAL_PAGE_SIZE,
  approverActor,
  decideApproval,
  getApproval,
  listApprovals,
  watchApprovals,
  WATCH_POLL_MS,
} from "./approvals.js";
export type { Actor, DecideApprovalRequest } from "./approvals.js";
export { endorseApproval, listEndorsements, revokeEndorsement } from "./endorsements.js";
export type { EndorseApprovalRequest } from "./endorsements.js";
export {
  approvalLinkUrl,
  createApprovalLink,
  linkTokenHash,
  openApprovalLink,
  redeemApprovalLink,
} from "./approval-links.js";
export type { ApprovalLinkSettings, OpenedLink } from "./approval-links.js";
export { approvalRun, type ApprovalRun } from "./approval-run.js";
export { auditGatewayRefusal, auditRefusedCall } from "./audit-events.js";
export type { RefusedCall, WebhookAttempt } from "./audit-events.js";
export {
  startWebhookDelivery,
  webhookCursorMeta,
  WEBHOOK_BATCH,
  type DeliveryOutcome,
  type WebhookDeliverer,
  type WebhookDelivererOptions,
} from "./webhooks.js";
export { WEBHOOK_LEASE_META, WEBHOOK_LEASE_MS } from "./webhook-lease.js";
export {
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  WEBHOOK_TOLERANCE_SECONDS,
} from "./webhook-signature.js";
export {
  slackText,
  webhookBody,
  webhookJsonBody,
  webhookSlackBody,
  type MessageOptions,
} from "./webhook-messages.js";
export type { Webhook, WebhookDelivery, WebhookFormat } from "../core/webhook.js";
export {
  createRefusalTally,
  DEFAULT_REFUSAL_KEYS,
  peerAddress,
  type RefusalTally,
  type RefusalTallyOptions,
  type UnauthenticatedRefusal,
} from "./refusal-tally.js";
export {
  auditHeadSeq,
  createAuditCheckpointer,
  followAudit,
  readAuditRecords,
  verifyAudit,
} from "./audit.js";
export type { AuditCheckpointer, AuditVerification, ExportedRecord } from "./audit.js";
export { verifyAuditWitnessed } from "./audit-verify.js";
export type { WitnessedVerification, WitnessedVerifyInput } from "./audit-verify.js";
export { archiveAnchor, archiveItems } from "./audit-archive.js";
export type { ArchiveBefore } from "./audit-archive.js";
export {
  archiveLine,
  witnessArchiveLine,
  witnessCheckpointLine,
  type WitnessedArchive,
  type WitnessedCheckpoint,
} from "../core/audit-witness.js";
export {
  CATALOG_CACHE_BOUNDS,
  MAX_CACHED_ANCESTORS,
  cacheStats,
  createAuthorityCaches,
} from "./caches.js";
export type { AuthorityCaches, CachedCatalog } from "./caches.js";
export { catalogCacheSize, catalogFor } from "./catalog.js";
export type { CatalogAnswer } from "./catalog.js";
export type { AuthorityContext, IdPrefix, PolicySet, TokenSettings } from "./context.js";
export {
  AUTHORITY_ERROR_CODES,
  AuthorityError,
  invalidRequest,
  isAuthorityError,
} from "./errors.js";
export type { AuthorityErrorCode, AuthorityErrorOptions, AuthorityReason } from "./errors.js";
export { MAX_TTL_SECONDS, delegateGrant, getGrant, issueGrant, revokeGrant } from "./grants.js";
export type { IssuedGrant } from "./grants.js";
export { publishedKeys, rotateSigningKey } from "./keys.js";
export { DEFAULT_AUTHORITY_LIMITS } from "./limits.js";
export type { AuthorityLimits } from "./limits.js";
export { loadGrant, loadGrantInForce } from "./load-grant.js";
export {
  DEFAULT_SWEEP_LIMITS,
  WITHDRAWN_PREFIX,
  createWithdrawalSweeper,
  mayWithdraw,
  recordWithdrawal,
  sweepWithdrawals,
} from "./sticky-withdrawal.js";
export type { SweepLimits, SweepResult, WithdrawalSweeper } from "./sticky-withdrawal.js";
export { createNotifier, pollForChanges } from "./notifier.js";
export type { Notifier } from "./notifier.js";
export {
  pruneApprovalLinks,
  pruneDecisionInputs,
  pruneEndorsements,
  pruneExpiredGrants,
} from "./retention.js";
export type { GrantCheck } from "./load-grant.js";
export { NO_SPIFFE_ROLES, parseSpiffeId, spiffeRolesOf } from "../core/spiffe-id.js";
export type { SpiffeId, SpiffeRoles } from "../core/spiffe-id.js";

// Domain types the callers of this layer speak in.
export type { CallRequest } from "../core/call-request.js";
export type { ComposeRequest as IssueRequest } from "../core/compose.js";
export type { CatalogView, ViewEntry } from "../core/project.js";
export type { DelegationSpec, RefusalCode } from "../core/delegate.js";
export type { TaskGrant } from "../core/grant.js";
export type { GrantMode } from "../core/policy.js";
export type { Decision, ReasonCode, Verdict, ApprovalStatus, Reason } from "../core/verdict.js";
export { APPROVAL_STATUSES } from "../core/verdict.js";
export { displayJson, displayText } from "../core/display-text.js";
export type { Approval } from "../core/approval.js";
export type { Endorsement, EndorsementStatus } from "../core/endorsement.js";
export type { ArgumentSummary } from "../core/approval-summary.js";
export type { ApprovalEvent, ApprovalEventKind } from "../core/approval.js";
export type { AuditEntry, AuditKind, StoredApiKey, StoredGrant } from "../store/port.js";
export type { Jwks } from "../token/index.js";

// The errors this layer lets through unchanged, for the one place that turns errors into statuses.
export { isLoadError } from "../core/errors.js";
export { isStoreError } from "../store/port.js";
export { isTokenError } from "../token/index.js";

// Policy testing (`charter test`): the suites run offline on the pure compose and decide.
export { changedRules, coverageOf, coverageReaches, runPolicyTests } from "../core/policy-test.js";
export type { TestReport, TestSuite } from "../core/policy-test.js";
export type { ObservedCall, ObservedScenario, ScenarioObservations } from "../core/policy-test.js";
export { isScenario, suiteProfiles } from "../core/policy-test-suite.js";
export { suiteDelegationSpec, suiteRequest } from "../core/policy-test-grant.js";
export { readRunAt } from "./run-state.js";

// Replay (`charter replay`): recorded decisions decided again under a candidate pair.
export { replayDecisions, type ReplayOptions } from "./replay.js";
export type { ReplayFlip, ReplayReport } from "../core/replay.js";
export { NOT_REPLAYABLE } from "../core/replay.js";

// Policy analysis (`charter analyze`) and the semantic diff (`charter diff`), offline on the pure core.
export { analyzePolicy, atOrAbove, SEVERITIES } from "../core/policy-analysis.js";
export type { Finding, Severity } from "../core/policy-analysis.js";
// The approver directory (the `approvers` setting): who approves which requirements, for whom.
export { directoryProblems, policyRequirements } from "../core/approvers.js";
export type { ApproverDirectory } from "../core/approvers.js";
// Slack interactive actions: approve/reject clicks, verified and mapped to a directory principal.
export {
  answerSlackAction,
  SLACK_APPROVE_ACTION,
  SLACK_MAX_BODY_BYTES,
  SLACK_REJECT_ACTION,
  slackSignatureProblem,
  type SlackAnswer,
  type SlackRequest,
  type SlackSettings,
} from "./slack-actions.js";
export { diffPolicies } from "../core/policy-diff.js";
export type { PolicyDiff, PolicyVersion } from "../core/policy-diff.js";
