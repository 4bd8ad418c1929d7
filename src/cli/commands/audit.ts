import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { createAppContext } from "../../app/context.js";
import {
  auditHeadSeq,
  followAudit,
  readAuditRecords,
  verifyAudit,
  type ExportedRecord,
} from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

const FLAGS = {
  ...CONFIG_FLAGS,
  out: { type: "string" },
  after: { type: "string" },
  lines: { type: "string" },
  count: { type: "string" },
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
  if (verb !== "verify" && verb !== "export" && verb !== "tail") {
    throw new UsageError(
      verb === undefined ? "audit needs a subcommand" : `unknown audit subcommand "${verb}"`,
    );
  }
  const after = intFlag(values.after, "--after") ?? 0;
  const lines = intFlag(values.lines, "--lines") ?? 10;
  const count = intFlag(values.count, "--count");
  const ctx = await createAppContext(await configFrom(values, io.env), { tokenCacheSize: 1 });
  try {
    switch (verb) {
      case "verify": {
        const result = await verifyAudit(ctx, (seq) => {
          if (seq % PROGRESS_EVERY === 0) io.err(`checked ${seq} records`);
        });
        if (!result.ok) {
          io.out(`audit log broken at record ${result.seq}: ${result.problem}`);
          return EXIT_AUDIT_BROKEN;
        }
        io.out(
          `audit log ok: ${result.records} records, ${result.checkpoints} signed checkpoints${result.head ? `, head ${result.head.hash}` : ""}`,
        );
        return 0;
      }
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

/** One JSONL line: the record's seq, its chain hash and its content. */
function line(record: ExportedRecord): string {
  return JSON.stringify({ seq: record.seq, hash: record.hash, entry: record.entry });
}

function intFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a non-negative integer`);
  return Number(value);
}
