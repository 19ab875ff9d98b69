import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../..');

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a project script with the pinned Node and waits for it to exit. */
export function runScript(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<ScriptResult> {
  return runCommand(process.execPath, [resolve(repoRoot, script), ...args], env, timeoutMs);
}

/** Runs a command at the repository's root (`npm run ...`, as a user types it) and waits for it to exit. */
export function runCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<ScriptResult> {
  const script = [command, ...args].join(' ');
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env, cwd: repoRoot });
    child.once('error', fail);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${script} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/**
 * Starts a long-running script; resolves once a line of its stdout matches `ready`. `detached`
 * gives it a process group of its own, as a terminal does for a command: `process.kill(-pid)`
 * then signals the group the way Ctrl-C does.
 */
export function startScript(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 60_000,
  options: { detached?: boolean; args?: string[] } = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  const { args = [], ...rest } = options;
  return startCommand(process.execPath, [resolve(repoRoot, script), ...args], env, ready, timeoutMs, rest);
}

/** startScript for any command at the repository's root (`npm start`, as a user types it). */
export function startCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs = 60_000,
  options: { detached?: boolean } = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  const script = [command, ...args].join(' ');
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      env,
      cwd: repoRoot,
      detached: options.detached ?? false,
    });
    child.once('error', fail);
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${script} was not ready within ${timeoutMs} ms; output:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        done({ child, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${script} exited (${code}) before it was ready; output:\n${output}`));
    });
  });
}

/** An environment without the variables that point the product at servers, ports or config. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  if (process.env.FERRETDB_BIN) env.FERRETDB_BIN = process.env.FERRETDB_BIN;
  return { ...env, ...extra };
}
