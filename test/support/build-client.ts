import { cleanEnv, runScript } from './run-script.ts';

let built: Promise<void> | undefined;

/**
 * Builds the client package into client/dist (`npm run build:client`), once per test run: the demo
 * page serves those modules, and a test must not depend on an earlier build being current.
 */
export function buildClient(): Promise<void> {
  built ??= runScript('node_modules/typescript/bin/tsc', ['-p', 'client'], cleanEnv(), 120_000).then(
    ({ code, stdout, stderr }) => {
      if (code !== 0) throw new Error(`building the client failed:\n${stdout}${stderr}`);
    },
  );
  return built;
}
