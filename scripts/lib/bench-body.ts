// The delivery both receiver benches send (bench-receiver.ts, bench-receiver-ab.ts), and the secret
// the bench receivers are configured with.
import { signBody } from '../../receiver/signature/sign-body.ts';
import { standardSignatureHeaders } from '../../receiver/signature/sign-standard.ts';
import { defaultTimestampToleranceSeconds } from '../../receiver/decision/create-webhook-verifier.ts';
import { ConfigError } from '../../shared/errors/config-error.ts';

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

/** Which signatures the benches send (BENCH_SCHEMES): both schemes, alternating, or the platform's only. */
export type BenchSchemes = 'both' | 'platform';

export function benchSchemes(value: string | undefined): BenchSchemes {
  const schemes = value ?? 'both';
  if (schemes !== 'both' && schemes !== 'platform')
    throw new Error('BENCH_SCHEMES: expected both or platform');
  return schemes;
}

/** Most bodies a bench holds signed at once: about 2.5 kB each in its heap, so about 1.2 GB. */
export const MAX_SIGNED_AHEAD = 480_000;
/** Longest run of bodies signed before it starts whose Standard Webhooks timestamps are still fresh. */
export const MAX_STANDARD_RUN_SECONDS = defaultTimestampToleranceSeconds - 60;

/**
 * Refuses, naming the variables, a run whose bodies signed ahead would not fit in memory (the
 * generator died out of heap without stopping its servers) or, with Standard Webhooks bodies,
 * would be sent past the receiver's timestamp tolerance (half of them refused as stale).
 */
export function checkSignedAhead(
  run: { seconds: [name: string, value: number]; rate: [name: string, value: number]; bodies: number },
  schemes: BenchSchemes,
): void {
  const [secondsName, seconds] = run.seconds;
  const problems: { variable: string; message: string }[] = [];
  if (run.bodies > MAX_SIGNED_AHEAD)
    problems.push({
      variable: `${secondsName} × ${run.rate[0]}`,
      message: `at most ${MAX_SIGNED_AHEAD.toLocaleString('en')} bodies signed ahead (this run: ${run.bodies.toLocaleString('en')}); lower one of them`,
    });
  if (schemes === 'both' && seconds > MAX_STANDARD_RUN_SECONDS)
    problems.push({
      variable: secondsName,
      message: `at most ${MAX_STANDARD_RUN_SECONDS} s with Standard Webhooks bodies, signed before the run (BENCH_SCHEMES=platform for longer)`,
    });
  if (problems.length > 0) throw new ConfigError(problems);
}

export interface SignedBenchRequest {
  payload: string;
  headers: Record<string, string>;
}

/**
 * Delivery `n`, signed the platform's way or, for every even `n` with both schemes, as a Standard
 * Webhooks delivery (webhook-id, webhook-timestamp, webhook-signature) to the bench's `sw` webhook.
 */
export function signedBenchRequest(n: number, schemes: BenchSchemes): SignedBenchRequest {
  if (schemes === 'both' && n % 2 === 0) {
    const payload = benchStandardBody(n);
    const message = { id: `msg_bench_${process.pid}_${n}`, timestamp: Math.floor(Date.now() / 1000) };
    const headers = standardSignatureHeaders(payload, benchStandardSecret, message);
    return { payload, headers: { 'content-type': 'application/json', ...headers } };
  }
  const payload = benchBody(n);
  return {
    payload,
    headers: { 'content-type': 'application/json', 'x-service-signature': signBody(payload, benchSecret) },
  };
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
