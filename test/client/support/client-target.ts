import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { devSecretOr } from '../../../scripts/lib/dev-secrets.ts';
import { sendSignedWebhook } from '../../../scripts/lib/send-signed-webhook.ts';
import { TEST_SECRET } from '../../tray-service/api/support/api-harness.ts';
import { banEvent } from '../../tray-service/bans/ban-events.ts';
import { useLiveTray } from '../../tray-service/live/support/live-harness.ts';
import { commentEvent, type TestEnvelope } from '../../tray-service/worker/event-builder.ts';

/**
 * What the client's tests call the client against: by default a tray service of the suite's own
 * (API, live streams and worker in this process, over the test servers), or, under
 * `npm run test:client:live`, the services a running `npm start` serves. The same test cases run
 * against both; everything they need from the service goes through its public doors (tokens signed
 * with its key, webhooks signed with its secret, the tray API).
 */
export interface ClientTarget {
  /** The tray API's URL. */
  readonly baseUrl: string;
  /** NETWORK_ID of the service: the first half of a block entry's `netid_uid`. */
  readonly networkId: string;
  /**
   * A user id of this run's own: a running stack keeps its data between runs, so a name used by an
   * earlier run (a banned user, a full tray) must not be met again.
   */
  user(name: string): string;
  /** A token the service accepts for `userId`, valid for an hour or `expiresInSeconds`. */
  token(userId: string, expiresInSeconds?: number): Promise<string>;
  /** A webhook event as the platform sends it; resolves once it is queued (not yet applied, live). */
  deliver(event: TestEnvelope): Promise<void>;
  /** New comments on the user's posts `targetId` at `at` (epoch ms), each a new record; waits until written, then reads those asked. */
  seed(userId: string, records: readonly SeedComment[]): Promise<void>;
  /** Bans the user globally and waits until the service refuses their tokens. */
  ban(userId: string): Promise<void>;
  /** How many live streams the service holds open, where the test can see inside it. */
  readonly openStreams: (() => number) | undefined;
}

export interface SeedComment {
  targetId: string;
  at: number;
  read?: boolean;
}

/** Where a running stack is, and its keys (`npm start`'s own unless the variables say otherwise). */
export interface RunningStack {
  trayUrl: string;
  receiverUrl: string;
  jwtSecret: string;
  webhookSecret: string;
  networkId: string;
}

/** The stack `npm run test:client:live` calls: TRAY_URL, RECEIVER_URL, the secrets `npm start` made. */
export function runningStackFromEnv(env: NodeJS.ProcessEnv = process.env): RunningStack {
  return {
    trayUrl: env.TRAY_URL ?? 'http://127.0.0.1:8081',
    receiverUrl: env.RECEIVER_URL ?? 'http://127.0.0.1:8080',
    jwtSecret: devSecretOr('JWT_SECRET', env.JWT_SECRET, 'JWT_SECRET', env),
    webhookSecret: devSecretOr('WEBHOOK_SECRET', env.WEBHOOK_SECRET, 'WEBHOOK_SECRET', env),
    networkId: env.NETWORK_ID ?? 'default',
  };
}

let running: RunningStack | undefined;

/** Points every client suite declared after this at a running stack (the live run's hooks call it). */
export function targetRunningStack(stack: RunningStack): void {
  running = stack;
}

const run = randomBytes(4).toString('hex');

/** Registers the enclosing suite's target: its own tray service, or the running stack's. */
export function useClientTarget(): ClientTarget {
  if (running) {
    const stack = running;
    return withPublicDoors({
      baseUrl: stack.trayUrl,
      networkId: stack.networkId,
      secret: stack.jwtSecret,
      openStreams: undefined,
      async deliver(event) {
        const body = JSON.stringify(event);
        const answer = await sendSignedWebhook(`${stack.receiverUrl}/webhooks`, body, stack.webhookSecret);
        if (answer.status !== 200)
          throw new Error(`the receiver answered ${answer.status} ${await answer.text()} to ${event.event}`);
      },
    });
  }
  const tray = useLiveTray({ instances: 1 });
  return withPublicDoors({
    get baseUrl() {
      return tray.instance(0).base;
    },
    networkId: 'net1',
    secret: TEST_SECRET,
    openStreams: () => tray.instance(0).live.hub.size,
    async deliver(event) {
      await tray.worker.deliver(event);
    },
  });
}

interface Doors {
  readonly baseUrl: string;
  readonly networkId: string;
  readonly secret: string;
  readonly openStreams: (() => number) | undefined;
  deliver(event: TestEnvelope): Promise<void>;
}

/** The target's operations, through the service's public doors only, the same for both kinds. */
function withPublicDoors(doors: Doors): ClientTarget {
  const key = new TextEncoder().encode(doors.secret);
  const token = (userId: string, expiresInSeconds = 3600) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
      .sign(key);
  const call = async (userId: string, path: string, init: RequestInit = {}) =>
    fetch(`${doors.baseUrl}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${await token(userId)}`,
        'Content-Type': 'application/json',
      },
    });
  /**
   * The user's unread count, exact on every call (history's totalPages is memoised for a few
   * seconds, so the seed waits on this rather than on history pages); undefined over the rate limit.
   */
  const unread = async (userId: string) => {
    const answer = await call(userId, '/notifications/v3');
    if (answer.status === 429) return undefined;
    if (!answer.ok) throw new Error(`GET /notifications/v3 answered ${answer.status} ${await answer.text()}`);
    return ((await answer.json()) as { data: { totalUnreadCount: number } }).data.totalUnreadCount;
  };
  return {
    get baseUrl() {
      return doors.baseUrl;
    },
    networkId: doors.networkId,
    openStreams: doors.openStreams,
    user: (name) => `${name}-${run}`,
    token,
    deliver: (event) => doors.deliver(event),
    async seed(userId, records) {
      const before = await unread(userId);
      if (before === undefined) throw new Error(`${userId} is over the rate limit before seeding`);
      for (const { targetId, at } of records) {
        await doors.deliver(
          commentEvent({
            postId: targetId,
            postOwner: userId,
            commentId: `cm-${targetId}`,
            createdAt: new Date(at).toISOString(),
          }),
        );
      }
      // Each record is new and unread: the count says when the worker has written them all.
      await until(
        async () => ((await unread(userId)) ?? 0) >= before + records.length,
        `${records.length} records of ${userId} to be written`,
      );
      for (const { targetId } of records.filter((record) => record.read)) {
        const answer = await call(userId, '/notifications/v2/read', {
          method: 'POST',
          body: JSON.stringify({ verb: 'comment', targetId }),
        });
        if (!answer.ok) throw new Error(`read answered ${answer.status} ${await answer.text()}`);
      }
    },
    async ban(userId) {
      await doors.deliver(banEvent('ban', [userId], new Date().toISOString()));
      await until(
        async () => (await call(userId, '/notifications/v3')).status === 401,
        `${userId}'s tokens to be refused`,
      );
    },
  };
}

/**
 * Polls `condition` every 400 ms for up to 15 s: slowly enough that the polls of one user stay well
 * below a running stack's per-user rate limit (100 calls in 5 s).
 */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}
