#!/usr/bin/env node
/**
 * The `tool-call-resilience` command: `tool-call-resilience audit <file|->`. See `--help`.
 */
import { runCli } from "./run.js";

// A reader that stops early (`audit threads.jsonl | head`) closes the pipe: what is left of the
// report has nowhere to go, which is the reader's choice and no error of the audit's.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await runCli(process.argv.slice(2));
