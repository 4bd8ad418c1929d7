import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  {
    ignores: [
      "node_modules/",
      "src/gen/",
      "coverage/",
      ".charter/",
      "dist/",
      "dist-examples/",
      "dist-bench/",
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Type information from tsconfig.json (src, test, bench, scripts, examples, *.ts); this
        // file is plain JavaScript outside every tsconfig.
        projectService: { allowDefaultProject: ["eslint.config.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      // Arrow shorthand such as `() => resolve()` or `(err) => (err ? reject(err) : resolve(v))` is
      // how the callback code reads; void in statement position is still reported.
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      // Counts, ports, byte sizes and line numbers go into messages everywhere; nullish, object
      // and other non-string values still need an explicit conversion.
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        {
          allowNumber: true,
          allowAny: false,
          allowBoolean: false,
          allowNullish: false,
          allowRegExp: false,
          allowNever: false,
          allowArray: false,
        },
      ],
      // The store adapters and test doubles implement Promise-returning ports over synchronous code
      // (better-sqlite3, in-memory maps): `async` there is what turns a synchronous throw into a
      // rejection, so removing it to please this rule would change behaviour.
      "@typescript-eslint/require-await": "off",
      "no-console": "off",
    },
  },
  {
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-globals": ["error", "Date", "process", "setTimeout", "setInterval"],
      "no-restricted-properties": [
        "error",
        { object: "Math", property: "random", message: "the core has no randomness" },
      ],
    },
  },
);
