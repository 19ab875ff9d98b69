/**
 * `npm test`'s checks before mocha, run at once instead of one after another: the type check, the
 * client package's build, ESLint and Prettier's check. They share no output and each is mostly
 * one core's work, so on CI's two cores together they take about half of the 40 s they took in a
 * row. Each one's output is printed whole when it ends, so the lines of two never mix; the exit
 * code is 1 when any failed, and the last line names those.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/** npm scripts (package.json), and test:lint's two halves apart: each is a core's worth of work. */
const checks: readonly { name: string; command: string; args: string[] }[] = [
  { name: 'test:types', command: 'npm', args: ['run', 'test:types'] },
  { name: 'test:client-build', command: 'npm', args: ['run', 'test:client-build'] },
  { name: 'eslint', command: bin('eslint'), args: ['.'] },
  { name: 'prettier', command: bin('prettier'), args: ['--check', '.'] },
];

function run(check: (typeof checks)[number]): Promise<boolean> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(check.command, check.args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    const finish = (ok: boolean, why: string) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n> ${check.name}: ${why}, ${seconds} s\n`);
      process.stdout.write(Buffer.concat(output));
      resolve(ok);
    };
    child.once('error', (error) => finish(false, `could not start: ${error.message}`));
    child.once('close', (code, signal) =>
      finish(code === 0, code === 0 ? 'passed' : `failed (${signal ?? `exit code ${code}`})`),
    );
  });
}

const results = await Promise.all(checks.map(run));
const failed = checks.filter((_, index) => !results[index]).map((check) => check.name);
if (failed.length > 0) {
  process.stdout.write(`\nstatic checks failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
