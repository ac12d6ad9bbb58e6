#!/usr/bin/env bun
// Boot only: the CLI decides what to run.
import { runCli } from "./cli";

const code = await runCli(process.argv.slice(2));
if (code !== null) process.exit(code);
