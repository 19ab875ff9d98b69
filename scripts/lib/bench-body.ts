// The delivery both receiver benches send (bench-receiver.ts, bench-receiver-ab.ts), and the secret
// the bench receivers are configured with.

export const benchSecret = 'bench-secret';
/** The bench's Standard Webhooks webhook's secret: `whsec_` and Base64 of 32 bytes. */
export const benchStandardSecret = `whsec_${Buffer.from('bench-standard-webhooks-secret-k').toString('base64')}`;

/** A channel.didCreate delivery of about 1.5 KB, unique per `n`. */
export function benchBody(n: number): string {
  return JSON.stringify({ event: 'channel.didCreate', data: benchData(n) });
}

/** The same event as a Standard Webhooks sender sends it: `type`, `timestamp`, `data`. */
export function benchStandardBody(n: number): string {
  return JSON.stringify({
    type: 'channel.didCreate',
    timestamp: '2026-11-20T09:00:00.000Z',
    data: benchData(n),
  });
}

function benchData(n: number) {
  const user = (i: number) => ({
    displayName: `Member ${i}`,
    updatedAt: '2026-11-20T09:00:00.000Z',
    createdAt: '2026-01-01T00:00:00.000Z',
    userId: `u-${i}`,
    roles: ['member'],
    flagCount: 0,
    hashflag: { bits: 64, hashes: 3, hash: [1, 2] },
  });
  return {
    userIds: ['u-1', 'u-2', 'u-3', 'u-4', 'u-5', 'u-6'],
    channel: {
      isDistinct: false,
      type: 'standard',
      metadata: { topic: 'bench' },
      tags: ['bench'],
      isMuted: false,
      lastActivity: '2026-11-20T09:00:00.000Z',
      updatedAt: '2026-11-20T09:00:00.000Z',
      createdAt: '2026-11-20T09:00:00.000Z',
      isRateLimited: false,
      rateLimitWindow: 1000,
      channelId: `bench-${process.pid}-${n}`,
      memberCount: 6,
      messageCount: 0,
    },
    users: [1, 2, 3, 4, 5, 6].map(user),
  };
}
