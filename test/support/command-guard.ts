import { MongoClient, type CommandStartedEvent } from 'mongodb';
import {
  commandViolations,
  defaultCommandGuardLimits,
  type CommandGuardLimits,
} from './command-violations.ts';

/** One command the guard objected to, with the test that was running when it was sent. */
export interface CommandViolation {
  test: string;
  problem: string;
}

function limitFromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`${name}: expected a whole number >= 1, got "${value}"`);
  return parsed;
}

/**
 * The suite's command guard. Threshold: COMMAND_GUARD_MAX_SINGLE_UPDATES (default 40).
 * STRICT_COMMAND_GUARD=off reports the violations at the end of the run instead of failing it.
 */
export const commandGuard = {
  limits: {
    maxSingleUpdates: limitFromEnv(
      'COMMAND_GUARD_MAX_SINGLE_UPDATES',
      defaultCommandGuardLimits.maxSingleUpdates,
    ),
  } satisfies CommandGuardLimits,
  strict: process.env.STRICT_COMMAND_GUARD !== 'off',
  /** Every violation of the run so far, in order. */
  violations: [] as CommandViolation[],
  /** The running test's full title (root beforeEach/afterEach keep it current). */
  current: 'outside a test (a before/after hook)',
};

const watched = new WeakSet<MongoClient>();

/** Command monitoring on a client: every command it starts is checked. Idempotent. */
export function watchClient(client: MongoClient): void {
  if (watched.has(client)) return;
  watched.add(client);
  // The options connect() builds the connection pools from (what `monitorCommands: true` sets).
  (client.options as { monitorCommands: boolean }).monitorCommands = true;
  client.on('commandStarted', (event: CommandStartedEvent) => {
    for (const problem of commandViolations(event.commandName, event.command, commandGuard.limits)) {
      commandGuard.violations.push({ test: commandGuard.current, problem });
    }
  });
}

let installed = false;

/**
 * Watches every MongoClient this process connects, whoever created it (connectMongo, a test's own
 * client, a bench harness run in-process): connect() is where each one, also one connected
 * implicitly by its first operation, takes its options.
 */
export function installCommandGuard(): void {
  if (installed) return;
  installed = true;
  const connect = MongoClient.prototype.connect;
  MongoClient.prototype.connect = function (this: MongoClient) {
    watchClient(this);
    return connect.call(this);
  };
}

/** The violations as one message naming each command and its test. */
export function describeViolations(violations: readonly CommandViolation[]): string {
  return violations.map((v) => `  - ${v.problem}\n    during: ${v.test}`).join('\n');
}
