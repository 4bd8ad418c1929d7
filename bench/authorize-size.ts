/**
 * Authorize's cost against the size of the catalog and the grant, in process through the
 * application layer's `authorize()` (real SQLite store with durable audit, real verifier cache,
 * real signing) on generated catalogs (`bench/generated-catalog.ts`), the same call shape, interleaved rounds, medians. Prints CPU µs per call (process
 * CPU, so fsync waits do not count) and calls/s, and the ratios: a 5,000-action catalog against
 * a 100-action one with the same grant (the target is 1.2x or less), and a 2,500-action grant
 * against a 50-action one (its token is 40 times longer, and a token is hashed once per call to
 * find it in the verifier's cache).
 *
 *   npm run bench:authorize-size            (BENCH_ROUNDS, BENCH_CALLS, BENCH_IN_FLIGHT to change the run)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAppContext, type AppContext } from "../src/app/context.js";
import { authorize, issueGrant } from "../src/authority/index.js";
import { DEFAULTS, MAX_TOKEN_BYTES_CEILING } from "../src/config/config.js";
import {
  allowedGeneratedAction,
  generatedAction,
  generatedArguments,
  GENERATED_PROFILE,
  writeGeneratedFixtures,
  type GeneratedSizes,
} from "./generated-catalog.js";
import { fmt, interleave, median, spread } from "./rounds.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 9);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 2000);
const IN_FLIGHT = Number(process.env["BENCH_IN_FLIGHT"] ?? 16);
/** The same 50-action grant from a 100- and a 5,000-action catalog; and a 2,500-action grant. */
const SIZES = {
  small: { actions: 100, granted: 50 },
  catalog: { actions: 5000, granted: 50 },
  grant: { actions: 5000, granted: 2500 },
} as const satisfies Record<string, GeneratedSizes>;
type Name = keyof typeof SIZES;
const NAMES = Object.keys(SIZES) as Name[];

interface Subject {
  readonly app: AppContext;
  readonly token: string;
  readonly tool: string;
  readonly argumentsJson: string;
}

async function subject(dir: string, sizes: GeneratedSizes): Promise<Subject> {
  const files = writeGeneratedFixtures(dir, sizes);
  // A 2,500-action grant's token is about 220 KB: the largest a token may be, not the default 64 KiB.
  const app = await createAppContext({
    ...DEFAULTS,
    maxTokenBytes: MAX_TOKEN_BYTES_CEILING,
    dataDir: join(dir, `data-${sizes.actions}`),
    ...files,
  });
  const { token } = await issueGrant(app, {
    profile: GENERATED_PROFILE,
    subject: "agent:bench",
    owner: "user:bench",
    purpose: "bench",
  });
  const i = allowedGeneratedAction(sizes);
  return {
    app,
    token,
    tool: generatedAction(i).tool,
    argumentsJson: JSON.stringify(generatedArguments(i)),
  };
}

/** Runs `CALLS` allowed calls, `IN_FLIGHT` at a time; answers [CPU µs per call, calls per second]. */
async function run(s: Subject): Promise<[number, number]> {
  let next = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < CALLS) {
      const n = next++;
      const { verdict } = await authorize(s.app, {
        grantToken: s.token,
        call: { callId: `c${n}`, toolName: s.tool, actionId: "", argumentsJson: s.argumentsJson },
      });
      if (verdict.decision !== "allow")
        throw new Error(
          `expected allow, got ${verdict.decision} ${verdict.reason?.code ?? ""}: ${verdict.reason?.message ?? ""}`,
        );
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return [(used.user + used.system) / CALLS, CALLS / seconds];
}

const dir = mkdtempSync(join(tmpdir(), "charter-size-"));
const subjects: Subject[] = [];
try {
  const contenders = Object.fromEntries(
    await Promise.all(
      Object.entries(SIZES).map(async ([name, size]) => [name, await subject(dir, size)] as const),
    ),
  ) as Record<Name, Subject>;
  subjects.push(...Object.values<Subject>(contenders));
  for (const s of subjects) await run(s);
  const cpu = { small: [] as number[], catalog: [] as number[], grant: [] as number[] };
  const measure = (name: Name) => async () => {
    const [c, r] = await run(contenders[name]);
    cpu[name].push(c);
    return r;
  };
  const rate = await interleave(ROUNDS, {
    small: measure("small"),
    catalog: measure("catalog"),
    grant: measure("grant"),
  });
  for (const name of NAMES) {
    const size = SIZES[name];
    console.log(
      `${String(size.actions).padStart(5)} actions / ${String(size.granted).padStart(4)} granted (token ${contenders[name].token.length} bytes): ` +
        `${fmt(median(cpu[name]))} µs CPU per call (spread ${fmt(spread(cpu[name]) * 100)}%), ${fmt(median(rate[name]))} calls/s (spread ${fmt(spread(rate[name]) * 100)}%)`,
    );
  }
  const ratio = (name: Name) => {
    const perRound = cpu[name].map((c, i) => c / (cpu.small[i] as number));
    return `${median(perRound).toFixed(3)}x (per-round ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)})`;
  };
  console.log(
    `CPU per call, catalog of 5,000 vs 100 actions (same grant): ${ratio("catalog")}; target <= 1.2x`,
  );
  console.log(`CPU per call, grant of 2,500 vs 50 actions: ${ratio("grant")}`);
  console.log(
    `(medians of ${ROUNDS} interleaved rounds of ${CALLS} calls, ${IN_FLIGHT} in flight)`,
  );
} finally {
  for (const s of subjects) await s.app.close();
  rmSync(dir, { recursive: true, force: true });
}
