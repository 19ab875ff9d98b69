import { Redis } from 'ioredis';

/** Calls and microseconds per command so far, from INFO commandstats (commands a script runs count too). */
export type CommandStats = ReadonlyMap<string, { calls: number; usec: number }>;

export function parseCommandStats(info: string): CommandStats {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return stats;
}

export async function redisCommandStats(redisUrl: string): Promise<CommandStats> {
  const client = new Redis(redisUrl);
  try {
    return parseCommandStats(await client.info('commandstats'));
  } finally {
    client.disconnect();
  }
}

/** What each command cost between two readings; commands not called in between are left out. */
export function commandStatsDelta(before: CommandStats, after: CommandStats): CommandStats {
  const delta = new Map<string, { calls: number; usec: number }>();
  for (const [name, { calls, usec }] of after) {
    const earlier = before.get(name) ?? { calls: 0, usec: 0 };
    if (calls > earlier.calls) delta.set(name, { calls: calls - earlier.calls, usec: usec - earlier.usec });
  }
  return delta;
}
