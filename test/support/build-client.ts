import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, repoRoot, runCommand } from './run-script.ts';

let built: Promise<void> | undefined;

const clientDir = join(repoRoot, 'client');

/**
 * The newest modification time of what the build reads: the client's sources, its tsconfig.json,
 * its build scripts (the declaration rewrite runs after tsc) and scripts/build-client.sh.
 */
function newestSource(): number {
  const inFolder = (folder: string): string[] =>
    readdirSync(join(clientDir, folder), { recursive: true, encoding: 'utf8' }).map((file) =>
      join(clientDir, folder, file),
    );
  const inputs = [
    join(clientDir, 'tsconfig.json'),
    join(repoRoot, 'scripts', 'build-client.sh'),
    ...inFolder('src'),
    ...inFolder('scripts'),
  ];
  return Math.max(...inputs.map((file) => statSync(file).mtimeMs));
}

/** Whether client/dist was built after the last change to its sources (setup.sh's test too). */
function distIsCurrent(): boolean {
  try {
    return statSync(join(clientDir, 'dist', 'stream', 'index.js')).mtimeMs >= newestSource();
  } catch {
    return false;
  }
}

/**
 * Builds the client package into client/dist (`npm run build:client`) when a source is newer than
 * the build, once per test run: the demo page serves those modules, and a test must not depend on
 * an earlier build being current. A current build is left alone: `npm test` builds it just before
 * mocha, and rewriting it then would race the other mocha process's tray services, which read
 * client/dist when they start.
 */
export function buildClient(): Promise<void> {
  built ??= distIsCurrent()
    ? Promise.resolve()
    : runCommand('bash', ['scripts/build-client.sh'], cleanEnv(), 120_000).then(
        ({ code, stdout, stderr }) => {
          if (code !== 0) throw new Error(`building the client failed:\n${stdout}${stderr}`);
        },
      );
  return built;
}
