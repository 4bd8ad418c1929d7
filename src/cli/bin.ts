#!/usr/bin/env node
import { processIo } from "./io.js";
import { runCli } from "./main.js";

// A reader that went away (`charter config | head`) ends the output, not the command: its exit
// code is still the command's, and no stack trace is printed.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
});

process.exitCode = await runCli(process.argv.slice(2), processIo);
