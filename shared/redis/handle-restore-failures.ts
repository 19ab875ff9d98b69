import type { Redis } from 'ioredis';

/** The subscribing commands, each with the one that undoes it. */
const SUBSCRIBING = {
  subscribe: 'unsubscribe',
  psubscribe: 'punsubscribe',
  ssubscribe: 'sunsubscribe',
} as const;
type Subscribing = keyof typeof SUBSCRIBING;
const subscribing = Object.keys(SUBSCRIBING) as Subscribing[];

/**
 * The commands ioredis (5.x, up to 6.0.0 at least) sends by itself when a connection is ready
 * again, to restore what the previous one had (its database, its subscriptions), and whose
 * failure it does not handle: nothing waits on their promises.
 */
const RESTORING_COMMANDS = ['select', ...subscribing] as const;

type AnyCommand = (this: Redis, ...args: unknown[]) => unknown;
type CommandName = (typeof RESTORING_COMMANDS)[number] | (typeof SUBSCRIBING)[Subscribing];

/** The parts of ioredis's Redis (5.x) that its typings keep private and the fix below uses. */
interface RedisInternals {
  setStatus?: (status: string, arg?: unknown) => void;
}

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { catch?: unknown }).catch === 'function';

/** A subscribing command's channels: ioredis takes them as arguments or as one array. */
const channelsOf = (args: readonly unknown[]): string[] =>
  args.flat().filter((arg): arg is string => typeof arg === 'string');

/**
 * When a connection with subscriptions is ready again, ioredis SUBSCRIBEs it again to its channels
 * (and SELECTs its database) without a handler on those commands' promises: one that fails becomes
 * an unhandled rejection, which ends the process (exitOnUncaught; Node's default too). Redis
 * refusing the password does exactly that: ioredis rejects every command waiting on the connection
 * with the AUTH's WRONGPASS, the re-SUBSCRIBE among them, so a password rotation done in the wrong
 * order, or an ACL user disabled for a moment, stopped the tray service at the first reconnect, and
 * a connection dropped again mid-restore could too. Upstream fixed it after ioredis 6.0.0 (the
 * fix's pull request, redis/ioredis#2187, was merged in September 2026 and no release on npm had it
 * by the end of November); this is the same fix, made from outside: such a command's failure goes
 * to the connection's `error` listeners (logRedisOutage, bull's), as ioredis does for the same
 * commands when it connects for the first time, and the connection keeps reconnecting.
 *
 * Only those ioredis sends itself: ioredis calls them synchronously right after it marks the
 * connection `ready` (setStatus, whose `ready` event comes a tick later), so the window is that
 * moment, closed at the next microtask. A caller's own SUBSCRIBE, before or after, keeps its
 * rejection: handling it stays the caller's job, and missing it stays a bug that ends the process.
 *
 * ioredis remembers a channel only once Redis confirmed the SUBSCRIBE, so a channel whose restore
 * failed was forgotten for good: bull's and the live streams' subscriptions stayed gone after Redis
 * took the password again. Such channels are owed and subscribed again at the next `ready`, before
 * the commands queued meanwhile (a caller's UNSUBSCRIBE among them) are sent; a caller's
 * UNSUBSCRIBE of an owed channel cancels the debt.
 */
export function handleRestoreFailures(redis: Redis): void {
  const internals = redis as unknown as RedisInternals;
  const setStatus = internals.setStatus;
  if (typeof setStatus !== 'function') return;
  const commands = redis as unknown as Record<CommandName, AnyCommand>;
  const owed: Record<Subscribing, Set<string>> = {
    subscribe: new Set(),
    psubscribe: new Set(),
    ssubscribe: new Set(),
  };
  let restoring = false;

  internals.setStatus = function (this: Redis, status: string, arg?: unknown) {
    setStatus.call(this, status, arg);
    if (status !== 'ready') return;
    restoring = true;
    queueMicrotask(() => {
      restoring = false;
    });
    for (const name of subscribing) {
      const channels = owed[name];
      if (channels.size === 0) continue;
      const again = [...channels];
      channels.clear();
      void commands[name].call(this, again);
    }
  };

  for (const name of RESTORING_COMMANDS) {
    const command = commands[name];
    commands[name] = function (this: Redis, ...args: unknown[]) {
      const result = command.apply(this, args);
      if (restoring && isPromise(result)) {
        result.catch((error: unknown) => {
          if (name !== 'select') for (const channel of channelsOf(args)) owed[name].add(channel);
          redis.silentEmit('error', error);
        });
      }
      return result;
    };
  }

  for (const name of subscribing) {
    const undo = SUBSCRIBING[name];
    const command = commands[undo];
    commands[undo] = function (this: Redis, ...args: unknown[]) {
      const channels = channelsOf(args);
      const debt = owed[name];
      if (channels.length === 0) debt.clear();
      else for (const channel of channels) debt.delete(channel);
      return command.apply(this, args);
    };
  }
}
