import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The running stack's connection URLs, passwords included: `set -a; . <it>; set +a`. */
export const stackEnvPath = (dataDir: string) => join(dataDir, 'stack.env');

/** A value as a POSIX shell reads it back unchanged: single-quoted, a quote written `'\''`. */
const shellQuoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * Writes the URLs of the servers the stack runs (their ports change every run, and the printed
 * URLs hide the passwords), so the operator scripts and a consumer of the queue can reach them:
 * 0600 from its creation, in the owner-only data directory, written whole under another name and
 * then renamed, so a shell never reads half of it. Removed when the stack stops.
 */
export function writeStackEnv(dataDir: string, variables: Record<string, string>): string {
  const path = stackEnvPath(dataDir);
  const next = `${path}.new`;
  rmSync(next, { force: true });
  const fd = openSync(next, 'wx', 0o600);
  try {
    const lines = Object.entries(variables).map(([name, value]) => `${name}=${shellQuoted(value)}`);
    writeSync(fd, `# npm start's servers while it runs (removed when it stops)\n${lines.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(next, path);
  return path;
}
