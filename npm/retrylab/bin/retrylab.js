#!/usr/bin/env node
// npx retrylab ...: runs the platform's binary with the same arguments and
// exits with its code. Ctrl-C reaches the binary itself (same process
// group), so this launcher only waits; SIGTERM is passed on.
import { spawn } from "node:child_process";
import { binaryPath } from "../lib/binary.js";

let bin;
try {
  bin = binaryPath();
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (sig !== "SIGINT") child.kill(sig);
  });
}
child.on("error", (e) => {
  console.error(`retrylab: ${bin}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
