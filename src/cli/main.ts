#!/usr/bin/env node
/**
 * The `tool-call-resilience` command: `tool-call-resilience audit <file|->`. See `--help`.
 */
import { runCli } from "./run.js";

process.exitCode = await runCli(process.argv.slice(2));
