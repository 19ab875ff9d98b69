import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  closeSync,
  constants as fsConstants,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '../../shared/errors/config-error.ts';
import { commandLinePath } from './cli.ts';
import { makeOwnerOnlyDir } from './owner-only-dir.ts';

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
  /** The stack's Redis password (`requirepass`): no other local account may use its queue. */
  REDIS_PASSWORD: string;
  /** The stack's PostgreSQL superuser password (scram-sha-256): no other local account may connect. */
  POSTGRES_PASSWORD: string;
}

/** The secrets the tools read (mint-token, sign-and-send, try-stack). */
const TOOL_NAMES = ['JWT_SECRET', 'WEBHOOK_SECRET', 'ADMIN_TOKEN'] as const;
/** Added later: a file written before them gets them on the stack's next start. */
const SERVER_NAMES = ['REDIS_PASSWORD', 'POSTGRES_PASSWORD'] as const;
const NAMES = [...TOOL_NAMES, ...SERVER_NAMES] as const;
export type ToolSecrets = Pick<DevSecrets, (typeof TOOL_NAMES)[number]>;

const newSecret = () => randomBytes(32).toString('base64url');
const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The stack's data directory, absolute: STACK_DATA_DIR (a relative one from the folder the command
 * was typed in, as every path the tools take), else `.data` at the repository's root. PostgreSQL
 * and Redis change into their own folders before they use the paths they are given, so a relative
 * one would name another place to each.
 */
export function devDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.STACK_DATA_DIR ? commandLinePath(env.STACK_DATA_DIR, env) : join(repoRoot, '.data');
}

export function devSecretsPath(dataDir: string): string {
  return join(dataDir, 'dev-secrets.json');
}

/** A path as a person at the repository's root would type it. */
export function shownPath(path: string): string {
  const inRepo = relative(repoRoot, path);
  return inRepo.startsWith('..') ? path : inRepo;
}

/**
 * What to do with a damaged secrets file: new secrets do not open a database made with the old
 * ones, so deleting the file alone leaves a stack that cannot start.
 */
const REMAKE =
  "put back a good copy, or delete the file together with the stack's postgres folder beside it to start afresh (its databases go with it)";

function parse(path: string, names: readonly (keyof DevSecrets)[]): Record<string, unknown> {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    // Not the parser's message: it quotes the text around the fault, a secret's characters too.
    throw new Error(`${path}: not valid JSON; ${REMAKE}`);
  }
  for (const name of names) {
    const value = parsed[name];
    if (typeof value !== 'string' || value.length < 32) {
      throw new Error(`${path}: ${name} is missing or shorter than 32 characters; ${REMAKE}`);
    }
  }
  return parsed;
}

/** The secrets file is there, and this account cannot read it. */
class SecretsUnreadableError extends Error {}

/**
 * The tools' secrets, or undefined when `npm start` has not run with this data directory yet.
 * Throws when the file is there but cannot be read (another account's stack: its data folder is
 * 0700), naming it and why: "run npm start" would send the user after secrets that exist.
 */
export function readDevSecrets(dataDir: string): ToolSecrets | undefined {
  const path = devSecretsPath(dataDir);
  try {
    // Also a folder this account may pass holding a file it may not read (a member of the group
    // the stack lets its PostgreSQL through with): unreadable, not damaged.
    accessSync(path, fsConstants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new SecretsUnreadableError(`${path} cannot be read (${code ?? (error as Error).message})`, {
      cause: error,
    });
  }
  const parsed = parse(path, TOOL_NAMES);
  return Object.fromEntries(TOOL_NAMES.map((name) => [name, parsed[name]])) as unknown as ToolSecrets;
}

/** Writes a new file whole, 0600 from its creation (`wx`: never over another). */
function write(path: string, secrets: DevSecrets): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(secrets, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `path` holding `secrets`, whole or not at all, and never over secrets another run made:
 * written under a temporary name, then linked to `path` (which fails when it exists). A start cut
 * off while writing (disk full, power) leaves no half-written file for every later start to trip on.
 */
function createWhole(path: string, secrets: DevSecrets): boolean {
  const temporary = `${path}.${process.pid}.new`;
  rmSync(temporary, { force: true });
  write(temporary, secrets);
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * Reads the secrets, making them on the first run; `created` says which. A file written before the
 * servers had passwords gets them added (the others kept, so earlier tokens still work); `added`
 * names them, and the stack then sets them on its servers.
 */
export function loadOrCreateDevSecrets(dataDir: string): {
  secrets: DevSecrets;
  created: boolean;
  added: (keyof DevSecrets)[];
} {
  const path = devSecretsPath(dataDir);
  makeOwnerOnlyDir(dataDir);
  const fresh = Object.fromEntries(NAMES.map((name) => [name, newSecret()])) as unknown as DevSecrets;
  if (createWhole(path, fresh)) return { secrets: fresh, created: true, added: [] };
  // Someone widened the file's mode: put it back to the owner only.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const existing = parse(path, TOOL_NAMES);
  const added = SERVER_NAMES.filter((name) => typeof existing[name] !== 'string');
  if (added.length === 0)
    return { secrets: parse(path, NAMES) as unknown as DevSecrets, created: false, added };
  const secrets = { ...existing } as unknown as DevSecrets;
  for (const name of added) secrets[name] = newSecret();
  // A new file renamed over the old: a crash leaves one whole file or the other, never half of one.
  const next = `${path}.new`;
  rmSync(next, { force: true });
  write(next, secrets);
  renameSync(next, path);
  return { secrets, created: false, added };
}

/**
 * A secret for a tool: its variable when set, else the stack's; the ConfigError says what to do
 * when there is neither.
 */
export function devSecretOr(
  variable: string,
  value: string | undefined,
  name: keyof ToolSecrets,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (value) return value;
  const dataDir = devDataDir(env);
  let secrets: ToolSecrets | undefined;
  try {
    secrets = readDevSecrets(dataDir);
  } catch (error) {
    // A damaged file says what to do about it itself; only another account's file is this advice's.
    if (!(error instanceof SecretsUnreadableError)) throw error;
    throw new ConfigError([
      {
        variable,
        message: `not set, and ${(error as Error).message}: run this as the account that ran \`npm start\`, or set ${variable}`,
      },
    ]);
  }
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
