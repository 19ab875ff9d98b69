import { SingleBar, Presets } from 'cli-progress';
import { readFileSync, statSync, type Stats } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import { envValue, parseEnv } from '../../shared/config/parse-env.ts';
import { ConfigError } from '../../shared/errors/config-error.ts';
import { UsageError } from '../../shared/errors/usage-error.ts';

/**
 * A path given on the command line, from the folder the command was typed in. `npm run` runs a
 * script at the package's root and names that folder in INIT_CWD: read from the root,
 * `cd data && npm run import-members -- members.csv` found no such file. Run by node itself, the
 * process's own working directory is that folder.
 */
export function commandLinePath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  // Only when npm ran it at the root: INIT_CWD passes to every child, and a script of the user's
  // own that changed folder first (`cd ops && node .../replay.ts spool ./spool`) meant that folder.
  const atRoot = env.npm_lifecycle_event !== undefined && process.cwd() === checkoutRoot;
  const typedIn = atRoot ? env.INIT_CWD : undefined;
  return resolve(typedIn || process.cwd(), path);
}

/** Why a path named on the command line cannot be read, in the operator's words. */
const UNREADABLE: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/**
 * The file or folder `path` names (UsageError `cannot read <path>: <why>`, exit 2, when it cannot
 * be looked at). Every failure read as "no such file" before: a folder the operator may not
 * search was reported missing.
 */
export function statOperand(path: string): Stats {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    throw new UsageError(`cannot read ${path}: ${UNREADABLE[code] ?? (code || String(error))}`);
  }
}

/** The checkout's root: where `npm run` runs the scripts. */
const checkoutRoot = resolve(import.meta.dirname, '../..');

/** `--help`/`-h` anywhere in argv: print the usage and exit 0 (before any other check). */
export function helpRequested(argv: readonly string[], usage: string): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
}

/**
 * On Ctrl-C or SIGTERM: `stopped` (say how to go on, free what is held), then exit 130 or 143, as a
 * shell expects of a command a signal ended. Returns the call that takes the handler off again.
 */
export function onStopSignal(stopped: () => void): () => void {
  const handler = (signal: NodeJS.Signals) => {
    stopped();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  for (const signal of STOP_SIGNALS) process.once(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** node:util parseArgs, with its errors turned into a UsageError that repeats the usage. */
export function parseCli<const T extends ParseArgsConfig>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>> {
  helpRequested(config.args ?? [], usage);
  refuseOptionsNpmTook(config);
  try {
    refuseRepeatedOrEmptyOptions(config);
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage.trim()}`);
  }
}

/**
 * An option given twice that takes one value: parseArgs keeps the last, so `--status applied
 * --status invalid` exported only invalid events, where the admin API refuses the same filter
 * twice and a typo repeated went unseen. An option given an empty value: `--secret "$S"` with S
 * unset, which the tools read as not given and filled in from the environment or the stack.
 */
function refuseRepeatedOrEmptyOptions(config: ParseArgsConfig): void {
  const seen = new Set<string>();
  for (const token of parseArgs({ ...config, tokens: true }).tokens) {
    if (token.kind !== 'option') continue;
    if (token.value === '') throw new Error(`--${token.name}: expected a value, got an empty one`);
    if (config.options?.[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new Error(`--${token.name}: given twice`);
    seen.add(token.name);
  }
}

/**
 * `npm run replay failed --dry-run` (no `--`): npm takes every option before `--` as its own
 * setting (npm_config_dry_run) and hands the script the rest, so the dry run moved the jobs for
 * real. An option of the script's that npm took, and that is not among the script's arguments, is
 * refused with the command that was meant. Only when npm ran this script itself (not a node command
 * a script of the user's runs, nor npx), and not for a setting of an .npmrc, which npm passes on
 * the same way.
 */
function refuseOptionsNpmTook(config: ParseArgsConfig): void {
  const script = process.env.npm_lifecycle_event;
  const command = process.env.npm_lifecycle_script ?? '';
  if (script === undefined || script === 'npx' || !command.includes(basename(process.argv[1] ?? ''))) return;
  const args = config.args ?? process.argv.slice(2);
  const fromFiles = npmrcSettings();
  const taken = Object.entries(config.options ?? {}).filter(([name]) => {
    // npm names its settings in lowercase: `--userId=u-1` before `--` is npm_config_userid.
    const setting = name.toLowerCase();
    const value = process.env[`npm_config_${setting.replaceAll('-', '_')}`];
    // An .npmrc's own value, not `dry-run=false` there and `--dry-run` typed before `--`.
    return (
      value !== undefined &&
      fromFiles.get(setting) !== value &&
      !args.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))
    );
  });
  if (taken.length === 0) return;
  const flags = taken.map(([name]) => `--${name}`);
  const meant = taken.every(([, option]) => option.type === 'boolean')
    ? `npm run ${script} -- ${[...args, ...flags].join(' ')}`
    : `npm run ${script} -- <arguments and options>`;
  throw new UsageError(
    `npm took ${flags.join(' ')} as its own setting (options typed before "--" go to npm, ` +
      `and so does an npm_config_* variable); if you meant the script's, run ${meant}`,
  );
}

/** The settings the .npmrc files npm read hold (the user's, the global one, the project's), by lowercase name. */
function npmrcSettings(): Map<string, string> {
  const files = [
    process.env.npm_config_userconfig,
    process.env.npm_config_globalconfig,
    process.env.npm_config_local_prefix && join(process.env.npm_config_local_prefix, '.npmrc'),
  ];
  const settings = new Map<string, string>();
  for (const file of files) {
    if (!file) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split(/\r?\n/)) {
      const [, key, value] = /^\s*([^\s;#=][^=]*?)\s*=\s*(.*?)\s*$/.exec(line) ?? [];
      if (key !== undefined && value !== undefined) settings.set(key.toLowerCase(), value);
    }
  }
  return settings;
}

/**
 * Runs a CLI's main function: operator mistakes and bad configuration print one line and exit 2,
 * anything else prints `error: <message>` and exits 1 (no stack trace unless DEBUG is set).
 */
export function runCli(main: () => Promise<number>): void {
  main()
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      if (error instanceof UsageError || error instanceof ConfigError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(2);
      }
      process.stderr.write(`error: ${(error as Error).message ?? String(error)}\n`);
      if (process.env.DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}

/** Only the variables a script needs, validated like the services' (shared/config). */
export function scriptEnv<S extends z.ZodRawShape>(shape: S): z.infer<z.ZodObject<S>> {
  return parseEnv(shape, process.env);
}

/**
 * One variable as the services read it (parseEnv): trimmed, and unset when empty. Read as it is, a
 * secret from a sourced CRLF env file kept its `\r`, and signed what the services refused.
 */
export function envText(name: string): string | undefined {
  return envValue(process.env, name);
}

const BAR_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** How often the progress is written as a line of its own when stderr is not a terminal. */
export const PROGRESS_LINE_MS = 10_000;

/**
 * A progress bar on stderr when it is a terminal. Otherwise (a scheduled job, a pipe into a log) a
 * line every PROGRESS_LINE_MS, and one at the start and at the end, so a long import, export or
 * replay shows it is moving there too; the summary is printed either way. It hides the terminal's
 * cursor while it draws, so Ctrl-C or SIGTERM while it shows stops it first (the cursor shown
 * again), then the signal does what it would have: the tool's own handler runs (stopOnSignal's
 * clean-up), or, with none, the process ends by the signal.
 */
export function progressBar(
  label: string,
  unit: string,
  options: {
    lineEveryMs?: number;
    /** No total known (more than a count bound): how many so far only, no bar, share or time left. */
    untotalled?: boolean;
  } = {},
): SingleBar {
  const lineEveryMs = options.lineEveryMs ?? PROGRESS_LINE_MS;
  const counts = `{percentage}% | {value}/{total} ${unit} | {eta_formatted} left`;
  const bar = new SingleBar(
    {
      format: options.untotalled
        ? `${label}: {value} ${unit}`
        : process.stderr.isTTY
          ? `${label} [{bar}] ${counts}`
          : `${label}: ${counts}`,
      stream: process.stderr,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
      noTTYOutput: true,
      notTTYSchedule: lineEveryMs,
      // Off a terminal each line ends with its own newline: no blank line after the last.
      clearOnComplete: !process.stderr.isTTY,
    },
    Presets.shades_classic,
  );
  const onSignal = (signal: NodeJS.Signals) => {
    bar.stop();
    // Registered first, so any handler of the tool's is still there: it decides. Without one, the
    // signal again, now with no listener: Node's default, ending the process by it.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const start = bar.start.bind(bar);
  const stop = bar.stop.bind(bar);
  bar.start = (...args: Parameters<SingleBar['start']>) => {
    for (const signal of BAR_SIGNALS) process.prependOnceListener(signal, onSignal);
    start(...args);
  };
  bar.stop = () => {
    for (const signal of BAR_SIGNALS) process.off(signal, onSignal);
    stop();
  };
  return bar;
}
