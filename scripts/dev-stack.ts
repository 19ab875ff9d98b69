// The quick-start command (`npm start`): Redis and PostgreSQL, with data under .data/ (kept between
// runs; no system service is touched), then the receiver and the tray service (API + worker) on
// the PostgreSQL storage adapter, all on loopback. The stack itself is scripts/lib/dev-stack-run.ts.
//
// Ctrl-C in a terminal signals every process of the foreground process group at once: the
// services would each get SIGINT from the terminal and SIGTERM from the stack, and take the second
// as "exit now" instead of draining. So the stack runs in a process group of its own (detached)
// and this process, the only one the terminal signals, passes each signal on exactly once: the
// first Ctrl-C drains and stops everything, a second one makes the services exit at once.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const stack = spawn(process.execPath, [join(import.meta.dirname, 'lib', 'dev-stack-run.ts')], {
  detached: true,
  stdio: ['ignore', 'inherit', 'inherit'],
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // A closed terminal (SIGHUP) stops the stack like Ctrl-C does.
  process.on(signal, () => stack.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal));
}
stack.once('exit', (code, signal) => {
  // A stack that did not end by its own stop (killed, or crashed) may leave its servers and services
  // running in its process group: they are stopped here, or the next start would refuse.
  if (code !== 0 && stack.pid !== undefined) {
    try {
      process.kill(-stack.pid, 'SIGTERM');
    } catch {
      // ESRCH: nothing of the group is left.
    }
  }
  process.exit(code ?? (signal === null ? 0 : 1));
});
