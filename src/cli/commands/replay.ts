import { replayStore } from "../../app/replay.js";
import { NOT_REPLAYABLE, type ReplayReport } from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, intFlag, parse } from "../options.js";

/** Exit codes of `charter replay`: 1 only with --fail-on-flip allow and a call newly allowed. */
export const REPLAY_EXIT = { done: 0, newlyAllowed: 1 } as const;

/** Decisions between two progress lines on stderr. */
const PROGRESS_EVERY = 100_000;

/**
 * `charter replay --candidate-policy FILE [--candidate-catalog FILE] [--from SEQ] [--to SEQ]
 * [--json] [--fail-on-flip allow]`: the recorded decisions decided again under a candidate,
 * offline on the data dir or the database; prints the transition matrix, the flips (the newly
 * allowing first, with their decision ids and what made them) and what could not be replayed.
 */
export async function replayCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    "candidate-policy": { type: "string" },
    "candidate-catalog": { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    json: { type: "boolean" },
    "fail-on-flip": { type: "string" },
  });
  const policy = values["candidate-policy"];
  if (policy === undefined) throw new UsageError("replay needs --candidate-policy FILE");
  const failOn = values["fail-on-flip"];
  if (failOn !== undefined && failOn !== "allow")
    throw new UsageError(`--fail-on-flip takes "allow", not "${failOn}"`);
  const from = intFlag(values.from, "--from");
  const to = intFlag(values.to, "--to");
  if (from !== undefined && to !== undefined && to < from)
    throw new UsageError("--to must not be before --from");
  const catalog = values["candidate-catalog"];
  let next = PROGRESS_EVERY;
  const report = await replayStore(
    await configFrom(values, io.env),
    { policy, ...(catalog === undefined ? {} : { catalog }) },
    {
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      progress: (n) => {
        if (n < next) return;
        io.err(`replayed ${n} decisions`);
        next = n + PROGRESS_EVERY;
      },
    },
  );
  if (values.json === true) io.out(JSON.stringify(report, null, 2));
  else printReport(report, io);
  const newlyAllowed = report.flips.some((f) => f.to === "allow");
  return failOn === "allow" && newlyAllowed ? REPLAY_EXIT.newlyAllowed : REPLAY_EXIT.done;
}

function printReport(report: ReplayReport, io: CliIo): void {
  const changed = report.replayed - report.unchanged;
  io.out(
    `${report.replayed} decisions replayed: ${report.unchanged} unchanged, ${changed} changed; ${report.notReplayable.count} not replayable`,
  );
  const cells = Object.entries(report.matrix);
  if (cells.length > 0) {
    const width = Math.max(...cells.map(([k]) => k.length));
    io.out("\ntransitions (recorded -> candidate):");
    for (const [cell, count] of cells) io.out(`  ${cell.padEnd(width)}  ${count}`);
  }
  if (report.flips.length > 0) {
    io.out("\nflips (newly allowed first):");
    for (const f of report.flips) {
      const because = f.because.length === 0 ? "" : `, by ${f.because.join(", ")}`;
      io.out(`  ${f.from} -> ${f.to}: ${f.count}${because}`);
      for (const id of f.decisionIds) io.out(`    ${id}`);
    }
  }
  const why = Object.entries(report.notReplayable.why);
  if (why.length > 0) {
    io.out("\nnot replayable:");
    for (const [reason, count] of why)
      io.out(`  ${count} ${reason}: ${NOT_REPLAYABLE[reason as keyof typeof NOT_REPLAYABLE]}`);
  }
}
