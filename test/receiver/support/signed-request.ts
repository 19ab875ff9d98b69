import { randomUUID } from 'node:crypto';
import { signBody } from '../../../receiver/signature/sign-body.ts';
import { standardSignatureHeaders } from '../../../receiver/signature/sign-standard.ts';

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

/** The secret of the Standard Webhooks webhook in tests: `whsec_` and Base64 of 37 bytes. */
export const testStandardSecret = `whsec_${Buffer.from('standard-webhooks-test-key-do-not-use').toString('base64')}`;

/** A Standard Webhooks payload (`type`, `timestamp`, `data`), as Svix and others send them. */
export function standardEvent(id = 'inv-1', type = 'invoice.paid'): string {
  return JSON.stringify({
    type,
    timestamp: '2026-11-20T09:00:00.000Z',
    data: { invoiceId: id, amount: 1250 },
  });
}

/** Headers of a valid Standard Webhooks delivery of `body`; each part can be changed. */
export function standardHeaders(
  body: string | Buffer,
  change: { id?: string; timestamp?: number; secret?: string } = {},
): Record<string, string> {
  const id = change.id ?? `msg_${randomUUID()}`;
  const timestamp = change.timestamp ?? Math.floor(Date.now() / 1000);
  const secret = change.secret ?? testStandardSecret;
  return { 'content-type': 'application/json', ...standardSignatureHeaders(body, secret, { id, timestamp }) };
}
