import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres/migrations.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.js";

// docs/store.md holds a pipe table headed "| version, name | SQLite | PostgreSQL |" with one row
// per migration, its first cell "N `name`".

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HEADER = "| version, name | SQLite | PostgreSQL |";

function documentedMigrations(): string[] {
  const lines = readFileSync(join(ROOT, "docs", "store.md"), "utf8").split("\n");
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`docs/store.md: no "${HEADER}" table`);
  const rows: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const first = line.slice(1).split("|")[0]?.trim() ?? "";
    const m = /^(\d+) `([\w-]+)`$/.exec(first);
    if (!m) throw new Error(`docs/store.md: migration cell "${first}" is not N \`name\``);
    rows.push(`${m[1] as string} ${m[2] as string}`);
  }
  return rows;
}

describe("docs/store.md migrations", () => {
  it("lists every migration of both adapters, in order, by version and name", () => {
    const sqlite = SQLITE_MIGRATIONS.map((m) => `${m.version} ${m.name}`);
    const postgres = POSTGRES_MIGRATIONS.map((m) => `${m.version} ${m.name}`);
    expect(postgres).toEqual(sqlite);
    expect(documentedMigrations()).toEqual(sqlite);
  });
});
