import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { settingsTables, withSettingsTables } from "../../scripts/settings-table.js";
import { USAGE } from "../../src/cli/main.js";
import { CONFIG_FLAGS, SERVE_CONFIG_FLAGS } from "../../src/cli/options.js";
import { SETTINGS, SETTING_NAMES } from "../../src/config/config.js";

// docs/configuration.md's settings tables are generated from the schema. `npm run docs:settings`
// runs this file with CHARTER_WRITE_SETTINGS_DOCS=1, which writes the page instead of checking it.

const PAGE = join(new URL("../../", import.meta.url).pathname, "docs", "configuration.md");

describe("docs/configuration.md settings tables", () => {
  if (process.env["CHARTER_WRITE_SETTINGS_DOCS"] === "1") {
    it("are written from the schema", () => {
      writeFileSync(PAGE, withSettingsTables(readFileSync(PAGE, "utf8")));
    });
    return;
  }

  it("are what the schema generates (run `npm run docs:settings` after changing a setting)", () => {
    const page = readFileSync(PAGE, "utf8");
    expect(page, "docs/configuration.md is stale: run `npm run docs:settings`").toBe(
      withSettingsTables(page),
    );
  });

  it("have one row per setting, each naming its environment variable and default", () => {
    const rows = settingsTables()
      .split("\n")
      .filter((line) => /^\| `\w+` \|/.test(line));
    expect(rows.map((line) => /^\| `(\w+)` \|/.exec(line)?.[1])).toEqual(SETTING_NAMES);
    expect(rows).toHaveLength(SETTING_NAMES.length);
    const maxMessage = rows.find((line) => line.startsWith("| `maxMessageBytes` |"));
    expect(maxMessage).toContain(`| \`${SETTINGS.maxMessageBytes.env}\` |`);
    expect(maxMessage).toContain("| `1048576` (1 MiB) |");
    // A machine-dependent default is stated in words, so the page is the same on every machine.
    expect(rows.find((line) => line.startsWith("| `workers` |"))).toContain(
      "| the number of cores |",
    );
  });
});

describe("the settings' names", () => {
  const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
  const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

  it("map to environment variables and flags as docs/configuration.md says", () => {
    for (const name of SETTING_NAMES) {
      const spec = SETTINGS[name] as { env: string; flag?: string };
      expect(spec.env, name).toBe(
        name === "database" ? "CHARTER_DATABASE_URL" : `CHARTER_${snake(name)}`,
      );
      if (spec.flag !== undefined) expect(`--${spec.flag}`, name).toBe(`--${kebab(name)}`);
    }
  });

  it("are the flags the commands take and the usage text names", () => {
    const withFlag = SETTING_NAMES.filter((name) => "flag" in SETTINGS[name]);
    const flagOf = (name: string) =>
      (SETTINGS[name as keyof typeof SETTINGS] as { flag: string }).flag;
    expect(Object.keys(SERVE_CONFIG_FLAGS).sort()).toEqual(
      ["config", ...withFlag.map(flagOf)].sort(),
    );
    expect(Object.keys(CONFIG_FLAGS)).not.toContain("workers");
    for (const flag of Object.keys(SERVE_CONFIG_FLAGS)) expect(USAGE).toContain(`--${flag} `);
    for (const name of withFlag) expect(USAGE).toContain(SETTINGS[name].env);
  });
});
