import { signBody } from '../../../receiver/signature/sign-body.ts';

/** The secret the receiver under test is configured with (`default` webhook). */
export const testSecret = 'test-secret-do-not-use';

/** Base64 HMAC-SHA256 of the exact bytes, as the platform signs (docs/contract.md#signature). */
export function sign(body: string | Buffer, secret = testSecret): string {
  return signBody(body, secret);
}

/** A valid `channel.didCreate` body (docs/contract.md#envelope); `channelId` makes it unique. */
export function channelDidCreate(channelId = 'ch-1'): string {
  return JSON.stringify({
    event: 'channel.didCreate',
    data: {
      userIds: ['u-1', 'u-2'],
      channel: {
        isDistinct: false,
        type: 'standard',
        metadata: {},
        tags: [],
        isMuted: false,
        lastActivity: '2026-11-20T09:00:00.000Z',
        updatedAt: '2026-11-20T09:00:00.000Z',
        createdAt: '2026-11-20T09:00:00.000Z',
        isRateLimited: false,
        rateLimitWindow: 1000,
        channelId,
        memberCount: 2,
        messageCount: 0,
      },
      users: [
        {
          displayName: 'Ana',
          updatedAt: '2026-11-20T09:00:00.000Z',
          createdAt: '2026-01-01T00:00:00.000Z',
          userId: 'u-1',
          roles: [],
          flagCount: 0,
          hashflag: { bits: 64, hashes: 3, hash: [1, 2] },
        },
      ],
    },
  });
}

/** Headers of a valid signed delivery of `body`. */
export function signedHeaders(body: string | Buffer, secret = testSecret): Record<string, string> {
  return { 'content-type': 'application/json', 'x-service-signature': sign(body, secret) };
}
