import { createWriteStream, readFileSync } from "node:fs";
import { once } from "node:events";
import { open } from "node:fs/promises";
import { createAppContext, type AppContext } from "../../app/context.js";
import {
  archiveAnchor,
  archiveItems,
  auditHeadSeq,
  verifyAuditWitnessed,
  archiveLine,
  type ArchiveBefore,
  type AuditVerification,
  type WitnessedVerification,
  followAudit,
  readAuditRecords,
  verifyAudit,
  type ExportedRecord,
} from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, intFlag, parse } from "../options.js";

const FLAGS = {
  ...CONFIG_FLAGS,
  out: { type: "string" },
  after: { type: "string" },
  lines: { type: "string" },
  count: { type: "string" },
  witness: { type: "string" },
  archive: { type: "string" },
  before: { type: "string" },
} as const;

/** Progress is reported every this many records, for logs at least this long. */
export const PROGRESS_EVERY = 1000;

/** Exit code of `charter audit verify` when the chain is broken. */
export const EXIT_AUDIT_BROKEN = 1;

/**
 * `charter audit`: the tamper-evident log, offline on the data dir (there is no audit RPC). The
 * same application functions the server uses read and check it; another process (a running
 * server) may append meanwhile.
 */
export async function auditCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, FLAGS, true);
  const [verb, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ""}"`);
  if (verb !== "verify" && verb !== "export" && verb !== "tail" && verb !== "archive") {
    throw new UsageError(
      verb === undefined ? "audit needs a subcommand" : `unknown audit subcommand "${verb}"`,
    );
  }
  const after = intFlag(values.after, "--after") ?? 0;
  const lines = intFlag(values.lines, "--lines") ?? 10;
  const count = intFlag(values.count, "--count");
  if (verb === "archive" && (values.before === undefined || values.archive === undefined))
    throw new UsageError(
      "audit archive needs --before <checkpoint seq or ISO time> and --archive FILE",
    );
  const before = values.before === undefined ? undefined : beforeFlag(values.before);
  // Read before anything is opened: a missing file changes nothing.
  const witnessText =
    values.witness === undefined ? undefined : readText(values.witness, "--witness");
  const archiveText =
    verb === "verify" && values.archive !== undefined
      ? readText(values.archive, "--archive")
      : undefined;
  const ctx = await createAppContext(await configFrom(values, io.env), { tokenCacheSize: 1 });
  try {
    switch (verb) {
      case "verify": {
        const onProgress = (seq: number) => {
          if (seq % PROGRESS_EVERY === 0) io.err(`checked ${seq} records`);
        };
        const withWitness = witnessText !== undefined || archiveText !== undefined;
        const witnessed = withWitness
          ? await verifyAuditWitnessed(ctx, {
              ...(witnessText === undefined ? {} : { witness: witnessText }),
              ...(archiveText === undefined ? {} : { archive: archiveText }),
              onProgress,
            })
          : undefined;
        const result: AuditVerification = witnessed ?? (await verifyAudit(ctx, { onProgress }));
        if (!result.ok) {
          io.out(`audit log broken at record ${result.seq}: ${result.problem}`);
          return EXIT_AUDIT_BROKEN;
        }
        io.out(
          `audit log ok: ${result.records} records, ${result.checkpoints} signed checkpoints${result.head ? `, head ${result.head.hash}` : ""}`,
        );
        if (result.firstKept !== undefined)
          io.out(
            `records 1 to ${result.firstKept - 1} are archived: the log starts at record ${result.firstKept}`,
          );
        if (witnessed?.ok === true) witnessSummary(witnessed, io);
        else
          io.err(
            "without --witness, records cut or rewritten together with the checkpoints after them go unnoticed",
          );
        return 0;
      }
      case "archive":
        return await archiveTo(ctx, before ?? { seq: 0 }, values.archive ?? "", io);
      case "export":
        return await exportTo(values.out, after, io, ctx);
      case "tail": {
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        let printed = 0;
        try {
          for await (const record of followAudit(
            ctx,
            Math.max(0, (await auditHeadSeq(ctx)) - lines),
            stop.signal,
          )) {
            io.out(line(record));
            if (count !== undefined && ++printed >= count) break;
          }
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
        }
        return 0;
      }
    }
  } finally {
    await ctx.close();
  }
}

async function exportTo(
  out: string | undefined,
  after: number,
  io: CliIo,
  ctx: Parameters<typeof readAuditRecords>[0],
): Promise<number> {
  const total = (await auditHeadSeq(ctx)) - after;
  const file = out === undefined ? undefined : createWriteStream(out, { flags: "w" });
  let written = 0;
  for await (const record of readAuditRecords(ctx, after)) {
    const text = `${line(record)}\n`;
    if (file) {
      if (!file.write(text)) await once(file, "drain");
    } else io.out(text);
    written += 1;
    if (total >= PROGRESS_EVERY && written % PROGRESS_EVERY === 0)
      io.err(`exported ${written}/${total} records`);
  }
  if (file) {
    file.end();
    await once(file, "finish");
  }
  io.err(`exported ${written} records`);
  return 0;
}

/**
 * `charter audit archive`: checks the log, records the run with the witnesses when configured,
 * appends the whole checkpointed segments before the anchor (records and checkpoints) to the
 * archive file and fsyncs it, then prunes them from the store in one transaction.
 */
async function archiveTo(
  ctx: AppContext,
  before: ArchiveBefore,
  file: string,
  io: CliIo,
): Promise<number> {
  const checked = await verifyAudit(ctx);
  if (!checked.ok) {
    io.out(`audit log broken at record ${checked.seq}: ${checked.problem}; nothing archived`);
    return EXIT_AUDIT_BROKEN;
  }
  const anchor = await archiveAnchor(ctx, before);
  if (anchor === undefined)
    throw new UsageError(
      `no signed checkpoint ${"seq" in before ? `at or before record ${before.seq}` : `signed at or before ${new Date(before.at * 1000).toISOString()}`} past the log's first record: nothing to archive`,
    );
  // The witnesses first: a run they did not take writes nothing, and one they took but that then
  // failed is harmless (their line names a first record the store does not start at).
  await ctx.auditWitness?.archived({ anchor: anchor.seq, hash: anchor.hash, at: ctx.now() });
  const fh = await open(file, "a", 0o600);
  let first: number | undefined;
  try {
    let text = "";
    for await (const item of archiveItems(ctx, anchor)) {
      if ("record" in item) {
        first ??= item.record.seq;
      }
      text += `${archiveLine(item)}\n`;
      if (text.length >= 1 << 20) {
        await fh.write(text);
        text = "";
      }
    }
    await fh.write(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  const pruned = await ctx.store.pruneAudit(anchor.seq);
  io.out(
    `archived records ${first ?? anchor.seq} to ${anchor.seq} to ${file}; ${pruned.records} records and ${pruned.checkpoints} checkpoints pruned, the log now starts at record ${anchor.seq}`,
  );
  return 0;
}

function witnessSummary(result: Extract<WitnessedVerification, { ok: true }>, io: CliIo): void {
  io.out(`witness: ${result.witnessed} witnessed checkpoints match`);
  if (result.witnessedArchived > 0)
    io.out(
      `witness: ${result.witnessedArchived} witnessed checkpoints are archived (give --archive to check them)`,
    );
  if (result.archived !== undefined)
    io.out(`archive: ${result.archived} archived records join the kept log`);
}

function readText(file: string, flag: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(
      `${flag} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
}

/** `--before`: a checkpoint's seq, or an ISO 8601 time. */
function beforeFlag(value: string): ArchiveBefore {
  if (/^\d+$/.test(value)) return { seq: Number(value) };
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new UsageError(
      `--before must be a checkpoint's record seq or an ISO 8601 time, got "${value}"`,
    );
  return { at: Math.floor(ms / 1000) };
}

/** One JSONL line: the record's seq, its chain hash and its content. */
function line(record: ExportedRecord): string {
  return JSON.stringify({ seq: record.seq, hash: record.hash, entry: record.entry });
}
