import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '../../shared/errors/config-error.ts';

/**
 * The development stack's own secrets (`npm start`): made with a cryptographic random generator on
 * its first run, kept in `<data dir>/dev-secrets.json` (mode 0600: its owner only) and reused
 * after, so tokens minted yesterday still work. Nothing in the repository opens a stack: each
 * machine's secrets are its own. The tools (mint-token, sign-and-send, try-stack) read them
 * when their variables are unset.
 */
export interface DevSecrets {
  /** The tray API's HS256 key (JWT_SECRET). */
  JWT_SECRET: string;
  /** The receiver's secret of webhook `dev` (WEBHOOK_SECRETS=dev=<it>). */
  WEBHOOK_SECRET: string;
  /** The admin API's bearer secret and the queue dashboard's sign-in (ADMIN_TOKEN). */
  ADMIN_TOKEN: string;
}

const NAMES = ['JWT_SECRET', 'WEBHOOK_SECRET', 'ADMIN_TOKEN'] as const;
const repoRoot = resolve(import.meta.dirname, '../..');

/** The stack's data directory: STACK_DATA_DIR, else `.data` at the repository's root. */
export function devDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STACK_DATA_DIR || join(repoRoot, '.data');
}

export function devSecretsPath(dataDir: string): string {
  return join(dataDir, 'dev-secrets.json');
}

/** A path as a person at the repository's root would type it. */
export function shownPath(path: string): string {
  const inRepo = relative(repoRoot, path);
  return inRepo.startsWith('..') ? path : inRepo;
}

function parse(path: string): DevSecrets {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  for (const name of NAMES) {
    const value = parsed[name];
    if (typeof value !== 'string' || value.length < 32) {
      throw new Error(
        `${path}: ${name} is missing or shorter than 32 characters; delete the file to make new ones`,
      );
    }
  }
  return parsed as unknown as DevSecrets;
}

/** The stack's secrets, or undefined when `npm start` has not run with this data directory yet. */
export function readDevSecrets(dataDir: string): DevSecrets | undefined {
  const path = devSecretsPath(dataDir);
  try {
    statSync(path);
  } catch {
    return undefined;
  }
  return parse(path);
}

/** Reads the secrets, making them on the first run; `created` says which. */
export function loadOrCreateDevSecrets(dataDir: string): { secrets: DevSecrets; created: boolean } {
  const path = devSecretsPath(dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secrets = Object.fromEntries(
    NAMES.map((name) => [name, randomBytes(32).toString('base64url')]),
  ) as unknown as DevSecrets;
  let fd: number;
  try {
    // 'wx': never overwrite secrets another run made (tokens minted with them would stop working).
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Someone widened the file's mode: put it back to the owner only.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    return { secrets: parse(path), created: false };
  }
  try {
    writeSync(fd, `${JSON.stringify(secrets, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  return { secrets, created: true };
}

/**
 * A secret for a tool: its variable when set, else the stack's; the ConfigError says what to do
 * when there is neither.
 */
export function devSecretOr(
  variable: string,
  value: string | undefined,
  name: keyof DevSecrets,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (value) return value;
  const dataDir = devDataDir(env);
  const secrets = readDevSecrets(dataDir);
  if (secrets === undefined) {
    throw new ConfigError([
      {
        variable,
        message:
          `not set, and there are no development secrets in ${shownPath(devSecretsPath(dataDir))}: ` +
          `set ${variable}, or run \`npm start\` once to make them`,
      },
    ]);
  }
  return secrets[name];
}
