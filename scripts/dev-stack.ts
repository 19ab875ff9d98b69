// The quick-start command (`npm start`): Redis and PostgreSQL, with data under .data/ (kept between
// runs; no system service is touched), then the receiver and the tray service (API + worker) on
// the PostgreSQL storage adapter, all on loopback. The stack itself is scripts/lib/dev-stack-run.ts.
//
// Ctrl-C in a terminal signals every process of the foreground process group at once: the
// services would each get SIGINT from the terminal and SIGTERM from the stack, and take the second
// as "exit now" instead of draining. So the stack runs in a process group of its own (detached)
// and this process, the only one the terminal signals, passes each signal on exactly once: the
// first Ctrl-C drains and stops everything, a second one makes the services exit at once.
//
// npm passes a signal on to the command it runs. Where npm's shell execs the command (bash: /bin/sh
// on Fedora and macOS, or npm's script-shell) that command is this process, which the terminal
// signalled too: one Ctrl-C arrives twice, within milliseconds, and would be taken as two. Signals
// that close together are passed on as one; a person's second Ctrl-C comes later.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { helpRequested } from './lib/cli.ts';
import { serviceStopMs } from './lib/dev-stack-stop.ts';

const usage = `
Usage: npm start

Runs Redis and PostgreSQL (data under .data/, or STACK_DATA_DIR), then the receiver and the tray
service, all on 127.0.0.1 (STACK_EXPOSE=on and HOST to listen further), and prints where each is.
Ctrl-C stops everything. Every setting is an environment variable (docs/configuration.md);
the stack sets development values only where you set nothing.
`;

// Before anything starts: `npm start -- --help` started the whole stack, and so did any argument.
const args = process.argv.slice(2);
helpRequested(args, usage);
if (args.length > 0) {
  process.stderr.write(
    `npm start takes no arguments (got ${args[0]}): set environment variables instead\n\n${usage.trim()}\n`,
  );
  process.exit(2);
}

/** Signals closer than this to the last one passed on are the same Ctrl-C. */
const SAME_SIGNAL_MS = 250;

// The IPC channel is how the stack learns that this process is gone however it ended: killed
// outright (SIGKILL, the OOM killer), it could pass no signal on, and the stack's group ran on.
const stack = spawn(process.execPath, [join(import.meta.dirname, 'lib', 'dev-stack-run.ts')], {
  detached: true,
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
let passedAt = -Infinity;
/** Set while the processes a killed stack left are given their grace: a Ctrl-C ends it at once. */
let killLeftNow: (() => void) | undefined;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    const now = performance.now();
    if (now - passedAt < SAME_SIGNAL_MS) return;
    passedAt = now;
    if (killLeftNow) return killLeftNow();
    // A closed terminal (SIGHUP) stops the stack like Ctrl-C does.
    stack.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
  });
}
/** Signals the stack's process group; false once nothing of it is left (ESRCH). */
const signalGroup = (pid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
};

stack.once('exit', (code, signal) => {
  const exitCode = code ?? (signal === null ? 0 : 1);
  // A stack that did not end by its own stop (killed, or crashed) may leave its servers and services
  // running in its process group: they are stopped here, or the next start would refuse. As the
  // stack's own stop does, SIGTERM and then SIGKILL for what is still there after serviceStopMs
  // (a service whose event loop does not run; PostgreSQL's smart shutdown waiting for its clients).
  const { pid } = stack;
  if (code === 0 || pid === undefined || !signalGroup(pid, 'SIGTERM')) process.exit(exitCode);
  const stopMs = serviceStopMs();
  const deadline = performance.now() + stopMs;
  killLeftNow = () => {
    signalGroup(pid, 'SIGKILL');
    process.exit(exitCode);
  };
  setInterval(() => {
    if (!signalGroup(pid, 0)) process.exit(exitCode);
    if (performance.now() < deadline) return;
    process.stderr.write(
      `[stack] processes of the stack still running ${stopMs / 1000} s after SIGTERM; killing them\n`,
    );
    killLeftNow?.();
  }, 200);
});
