// `npm run try-stack`: what a new user does after `npm start`, at volume. Sends a community's worth
// of signed events to the running receiver (a join of --members members, --feed-posts user-feed
// posts with a mention, --comments comments on 50 community posts, then 20 community posts),
// waits until the last post shows in a member's v3 history, and times history pages and unread
// counts of the first post owners through the tray API, right after the load and again at rest.
// Among the load, one user gets --dense mentions within a minute, several sharing a millisecond;
// then the inbox walks: that dense user's pages and counts, and a new user's inbox steps as
// docs/tray-api.md shows them with curl, the demo page among them (scripts/lib/walk/).
// Secrets default to WEBHOOK_SECRET, JWT_SECRET and ADMIN_TOKEN, else to those `npm start` made;
// the services' addresses to npm start's (RECEIVER_PORT, TRAY_PORT, ADMIN_PORT, HOST).
import { checkReachable } from './lib/check-reachable.ts';
import { sendSignedWebhook } from './lib/send-signed-webhook.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { envText, parseCli, runCli } from './lib/cli.ts';
import { devSecretOr } from './lib/dev-secrets.ts';
import { hs256Token } from './lib/hs256-token.ts';
import { walkDenseUser } from './lib/walk/dense-user-walk.ts';
import { walkInbox } from './lib/walk/inbox-walk.ts';
import { feedMentionBody } from './lib/walk/walk-events.ts';
import { quantile } from './lib/quantile.ts';
import { stackAddresses } from './lib/stack-addresses.ts';

const defaults = stackAddresses();
const usage = `
Usage: npm run try-stack -- [--members 500] [--feed-posts 400] [--comments 2000] [--dense 600]
  [--samples 200] [--walk on|off|only] [--receiver ${defaults.webhooks}]
  [--tray ${defaults.tray}] [--admin ${defaults.admin}]
  [--secret <webhook secret>] [--jwt-secret <JWT_SECRET>] [--admin-token <ADMIN_TOKEN>]

Needs a running stack (npm start). Prints the send time, how long after the last acknowledgement
the last post showed in a member's history, and history/unread latencies (p50, p99 of --samples
calls each) right after the load and again after 5 s at rest. One user gets --dense mentions
within a minute. Then the inbox walk (--walk on): the dense user's pages and counts through reads,
archive, snooze and seen, and a new user's steps of docs/tray-api.md#the-inbox (mute, archive all
read, a 5 s snooze watched on the demo page in headless Chromium, a deleted comment), each printed
with its timing; the first wrong outcome stops the run with exit 1. --walk only: the new user's
steps alone, without the load. The secrets default to WEBHOOK_SECRET, JWT_SECRET and ADMIN_TOKEN,
else to those npm start made (.data/dev-secrets.json); a wrong one (the receiver refuses the
events, the tray service the token) stops the run at once with exit 1. The addresses default to
npm start's (RECEIVER_PORT, TRAY_PORT, ADMIN_PORT, HOST, as the stack reads them); a service not
answering there stops the run at once, naming its URL. --members: at least 2.`;

/** Throws, naming the tray service and the secret to check, when `res` refused the token. */
async function checkTokenTaken(res: Response): Promise<void> {
  if (res.status !== 401 && res.status !== 403) return;
  throw new Error(
    `the tray service at ${new URL(res.url).origin} refused the token: ${res.status} ${errorMessage(await res.text())} ` +
      "(is --jwt-secret, or JWT_SECRET, the tray service's?)",
  );
}

const whole = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name}: expected a whole number >= 1, got "${value}"`);
  return n;
};

/** How long the stack rests before the second measurement: the worker is long done by then. */
const REST_MS = 5_000;
/** Calls of each kind one member makes per measurement: 2 x 50 is the default per-user limit. */
const PER_MEMBER = 50;

const quantile1 = (sorted: readonly number[], q: number) => quantile(sorted, q).toFixed(1);

/** The `message` of a JSON error answer (the services' error body), else the text's first 200 characters. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: a proxy's page, say
  }
  return text.slice(0, 200);
}

/** Calls `say` every `ms` until stopped: a long step shows it is still going. */
function every(ms: number, say: () => void): { stop(): void } {
  const timer = setInterval(say, ms);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

async function main(): Promise<number> {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        members: { type: 'string', default: '500' },
        'feed-posts': { type: 'string', default: '400' },
        comments: { type: 'string', default: '2000' },
        dense: { type: 'string', default: '600' },
        walk: { type: 'string', default: 'on' },
        admin: { type: 'string', default: defaults.admin },
        'admin-token': { type: 'string' },
        samples: { type: 'string', default: '200' },
        receiver: { type: 'string', default: defaults.webhooks },
        tray: { type: 'string', default: defaults.tray },
        secret: { type: 'string' },
        'jwt-secret': { type: 'string' },
      },
    },
    usage,
  );
  const members = whole('members', values.members);
  // The last post is read by a member who did not write it: an author is never told of their own.
  if (members < 2)
    throw new UsageError(
      `--members: expected >= 2 (someone other than the author reads the last post), got ${members}`,
    );
  const dense = whole('dense', values.dense);
  const walk = values.walk;
  if (walk !== 'on' && walk !== 'off' && walk !== 'only')
    throw new UsageError(`--walk: expected on, off or only, got "${walk}"`);
  if (walk === 'on' && dense < 150)
    throw new UsageError(`--dense: the walk reads 40 of them and snoozes 100: expected >= 150, got ${dense}`);
  const webhookSecret = devSecretOr(
    'WEBHOOK_SECRET',
    values.secret ?? envText('WEBHOOK_SECRET'),
    'WEBHOOK_SECRET',
  );
  const jwtSecret = devSecretOr('JWT_SECRET', values['jwt-secret'] ?? envText('JWT_SECRET'), 'JWT_SECRET');
  // The walk reads the stored events through the admin API (is a muted comment applied yet?).
  const adminToken =
    walk === 'off'
      ? ''
      : devSecretOr('ADMIN_TOKEN', values['admin-token'] ?? envText('ADMIN_TOKEN'), 'ADMIN_TOKEN');
  const feedPosts = whole('feed-posts', values['feed-posts']);
  const comments = whole('comments', values.comments);
  const samples = whole('samples', values.samples);
  // Before anything is sent: a stack that is not running is named, not reported as "fetch failed".
  await checkReachable('receiver', values.receiver, '--receiver, or RECEIVER_PORT and HOST,');
  await checkReachable('tray service', values.tray, '--tray, or TRAY_PORT and HOST,');
  if (walk !== 'off') await checkReachable('admin listener', values.admin, '--admin, or ADMIN_PORT,');
  // And the token, before the load: a wrong secret found after sending thousands of events costs the
  // whole send.
  await checkTokenTaken(
    await fetch(`${values.tray}/notifications/v3`, {
      headers: { authorization: `Bearer ${await hs256Token(jwtSecret, 'try-stack-token-check')}` },
    }),
  );
  const run = Date.now().toString(36);
  const stack = {
    receiver: values.receiver,
    tray: values.tray,
    admin: values.admin,
    webhookSecret,
    jwtSecret,
    adminToken,
    run,
  };
  if (walk === 'only') {
    process.stdout.write('the inbox walk of a new user:\n');
    await walkInbox(stack);
    return 0;
  }
  const t0 = Date.now() - 3_600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const u = (n: number) => `try-${run}-u${n}`;
  const community = { communityId: `try-${run}-club`, displayName: 'Try Club' };
  const users = (ids: string[]) => ids.map((userId) => ({ userId, displayName: userId }));
  const event = (name: string, data: object) => JSON.stringify({ event: name, data });
  const all = Array.from({ length: members }, (_, i) => u(i));
  const bodies = [
    event('community.didJoin', { community, userIds: all, createdAt: iso(t0), users: users(all) }),
  ];
  for (let i = 0; i < feedPosts; i++) {
    const [author, mentioned] = [u(i % members), u((i * 7 + 1) % members)];
    const post = { postId: `try-${run}-fp${i}`, postedUserId: author, targetType: 'user', targetId: author };
    bodies.push(
      event('post.didCreate', {
        post: {
          ...post,
          text: 'hi',
          createdAt: iso(t0 + 60_000 + i),
          mentionees: [{ type: 'user', userIds: [mentioned] }],
        },
        users: users([author, mentioned]),
      }),
    );
  }
  for (let i = 0; i < comments; i++) {
    const [owner, author] = [u((i % 50) % members), u((i * 13 + 3) % members)];
    const postId = `try-${run}-cp${i % 50}`;
    bodies.push(
      event('comment.didCreate', {
        comment: {
          commentId: `try-${run}-c${i}`,
          userId: author,
          referenceType: 'post',
          referenceId: postId,
          parentId: null,
          segmentNumber: i,
          text: 'nice',
          createdAt: iso(t0 + 120_000 + i * 10),
          mentionees: [],
        },
        post: { postId, postedUserId: owner, targetType: 'community', targetId: community.communityId },
        community,
        users: users([author, owner]),
      }),
    );
  }
  // One user's --dense mentions within a minute (four to a millisecond), among the load: the
  // inbox walk then pages them and counts them through bulk marks.
  const denseUser = { userId: `try-${run}-dense`, displayName: 'Dense' };
  for (let i = 0; i < dense; i++) {
    const author = { userId: u(i % members), displayName: u(i % members) };
    const at = t0 + 300_000 + Math.floor(i / 4) * Math.floor((60_000 * 4) / dense);
    bodies.push(feedMentionBody(`try-${run}-dp${i}`, author, denseUser, at));
  }
  const lastPost = `try-${run}-news19`;
  const newsAuthor = (i: number) => u((100 + i) % members);
  for (let i = 0; i < 20; i++) {
    const author = newsAuthor(i);
    bodies.push(
      event('post.didCreate', {
        post: {
          postId: `try-${run}-news${i}`,
          postedUserId: author,
          targetType: 'community',
          targetId: community.communityId,
          text: 'news',
          createdAt: iso(t0 + 600_000 + i * 1000),
        },
        community,
        users: users([author]),
      }),
    );
  }

  const started = performance.now();
  let next = 0;
  let accepted = 0;
  let refused = 0;
  let lastAck = started;
  // A refused signature or address (401, 403) is the same for every event: once nothing has been
  // accepted and one is refused so, the rest would be too. Stop at once instead of sending them
  // all and then waiting 600 s for a post that never arrived.
  let refusal: string | undefined;
  const sending = every(5_000, () =>
    process.stdout.write(`sent ${accepted + refused} of ${bodies.length} events\n`),
  );
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let body = bodies[next++]; body !== undefined && !refusal; body = bodies[next++]) {
        const res = await sendSignedWebhook(values.receiver, body, webhookSecret);
        const text = await res.text();
        if (res.status === 200) accepted += 1;
        else refused += 1;
        if ((res.status === 401 || res.status === 403) && accepted === 0)
          refusal ??= `${res.status} ${errorMessage(text)}`;
        lastAck = performance.now();
      }
    }),
  );
  sending.stop();
  if (refusal) {
    throw new Error(
      `the receiver at ${values.receiver} refused the events: ${refusal} ` +
        "(is --secret, or WEBHOOK_SECRET, the receiver's webhook secret?)",
    );
  }
  process.stdout.write(
    `sent ${bodies.length} events in ${((lastAck - started) / 1000).toFixed(1)} s, ${refused} not 200\n`,
  );

  const auth = async (user: string) => ({
    authorization: `Bearer ${await hs256Token(jwtSecret, user)}`,
  });
  // A member, but not the last post's author: an author is not told of their own post.
  const reader = u(members - 1) === newsAuthor(19) ? u(members - 2) : u(members - 1);
  const readerAuth = await auth(reader);
  let visible = false;
  const waiting = every(10_000, () =>
    process.stdout.write(
      `waiting for the last community post in ${reader}'s history (${((performance.now() - lastAck) / 1000).toFixed(0)} s of at most 600)\n`,
    ),
  );
  while (!visible && performance.now() - lastAck < 600_000) {
    const res = await fetch(`${values.tray}/notifications/v3/history`, { headers: readerAuth });
    // A refused token stays refused: waiting cannot make the post show.
    await checkTokenTaken(res);
    const page = (await res.json()) as { data?: { lastActionId: string }[] };
    visible = (page.data ?? []).some((record) => record.lastActionId === lastPost);
    if (!visible) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  waiting.stop();
  const lag = ((performance.now() - lastAck) / 1000).toFixed(1);
  process.stdout.write(
    visible
      ? `the last community post showed in ${reader}'s v3 history ${lag} s after the last acknowledgement\n`
      : `the last community post did not show within 600 s\n`,
  );

  // --samples of each call, alternately, over the client's keep-alive connection (30 made the p99
  // the single slowest call): right after the load, as the worker settles, then again once the
  // stack has been at rest for a few seconds, which tells the stack's own latency from the load's
  // share of the machine. Each member makes at most PER_MEMBER of each, within the default
  // per-user limit (100 calls per 5 s), so the calls are spread over the first few post owners.
  const owners = Array.from({ length: Math.min(members, Math.ceil(samples / PER_MEMBER)) }, (_, i) => u(i));
  let failed = 0;
  const measure = async (when: string) => {
    const history: number[] = [];
    const unread: number[] = [];
    // The floor of a call to the tray process on this machine at this moment: GET /healthz reads
    // neither storage nor Redis. Where its p99 is as high as the others', the machine is the cause.
    const floor: number[] = [];
    for (const [index, owner] of owners.entries()) {
      const headers = await auth(owner);
      const timed = async (path: string, into: number[]) => {
        const t = performance.now();
        const res = await fetch(`${values.tray}${path}`, path === '/healthz' ? {} : { headers });
        await res.arrayBuffer();
        into.push(performance.now() - t);
        if (res.status !== 200) failed += 1;
      };
      for (let i = index * PER_MEMBER; i < Math.min(samples, (index + 1) * PER_MEMBER); i++) {
        await timed('/notifications/v3/history', history);
        await timed('/notifications/v3', unread);
        await timed('/healthz', floor);
      }
    }
    floor.sort((a, b) => a - b);
    history.sort((a, b) => a - b);
    unread.sort((a, b) => a - b);
    const who = owners.length === 1 ? u(0) : `${u(0)}..${owners.length - 1}`;
    process.stdout.write(
      `${who} ${when}: history p50 ${quantile1(history, 0.5)} ms, p99 ${quantile1(history, 0.99)} ms; unread p50 ${quantile1(unread, 0.5)} ms, p99 ${quantile1(unread, 0.99)} ms (${history.length} calls each; GET /healthz p50 ${quantile1(floor, 0.5)} ms, p99 ${quantile1(floor, 0.99)} ms)\n`,
    );
  };
  await measure('right after the load');
  await new Promise((resolve) => setTimeout(resolve, REST_MS));
  await measure(`after ${REST_MS / 1000} s at rest`);
  if (failed > 0) process.stdout.write(`${failed} of those calls did not answer 200\n`);
  if (walk === 'on') {
    process.stdout.write(`the inbox walk of ${denseUser.userId} (${dense} records within a minute):\n`);
    await walkDenseUser(values.tray, jwtSecret, denseUser.userId, dense);
    process.stdout.write('the inbox walk of a new user:\n');
    await walkInbox(stack);
  }
  return visible && refused === 0 && failed === 0 ? 0 : 1;
}

runCli(main);
