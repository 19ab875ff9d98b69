import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import type { TrayOperation } from '../../support/reference-tray/reference-tray.ts';
import { uniqueName, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import { sendEvents, type Delivery } from '../support/burst.ts';
import { queueCounts } from '../support/queue-counts.ts';
import { faultSecret, startReceiverProcess, type ReceiverProcess } from '../support/receiver-process.ts';
import { reportFigures, tally } from '../support/report-figures.ts';
import { openTargetStorage, type StorageTarget } from '../support/storage-target.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../support/tray-process.ts';
import {
  checkInboxAgainstModel,
  inboxModel,
  recordsChangedBy,
  type InboxMismatch,
  type RunStep,
} from './support/inbox-model.ts';
import { buildLoadSequence, type LoadEvent } from './support/load-sequence.ts';
import { withRemovals } from './support/removal-mix.ts';

/** RELIABILITY_LOAD_EVENTS, as in sustained-load.test.ts: the target is 20,000, CI runs the default. */
const eventCount = Number(process.env.RELIABILITY_LOAD_EVENTS ?? 2_000);
const concurrency = Number(process.env.RELIABILITY_LOAD_CONCURRENCY ?? 48);
/** Removals' share of the events sent. */
const REMOVAL_SHARE = 0.1;
const SEED = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Caller {
  port: number;
  userId: string;
  token: string;
}

async function call(caller: Caller, method: string, path: string, body?: object): Promise<unknown> {
  const answer = await fetch(`http://127.0.0.1:${caller.port}/notifications/v3${path}`, {
    method,
    headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const json = (await answer.json()) as { data: unknown };
  if (!answer.ok) throw new Error(`${method} ${path}: HTTP ${answer.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function keysOf(caller: Caller, view: string): Promise<string[]> {
  const page = (await call(caller, 'GET', `/history?view=${view}`)) as unknown;
  return (page as { v_tarid_uid: string }[]).map((record) => record.v_tarid_uid);
}

describe(`sustained load with removals, mutes, archives and snoozes: ${eventCount} events (real processes)`, function () {
  this.timeout(3_600_000);
  let dir: string;
  const processes: (ReceiverProcess | TrayProcess)[] = [];
  const deliveries: Delivery[] = [];
  let mismatches: InboxMismatch[] = [];
  let sent = 0;
  let failedJobs = -1;
  let changedBy: Record<string, number> = {};

  after(async () => {
    for (const child of processes.splice(0)) await child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  const postgres = usePostgres();

  before(async function () {
    this.timeout(3_600_000);
    dir = mkdtempSync(join(tmpdir(), 'reliability-inbox-load-'));
    const prefix = useQueuePrefix();
    const { redisUrl } = testStack();
    const target: StorageTarget = { engine: 'postgres', url: postgres.url };
    // Migrated before the tray process starts, then closed: every check below goes through the API.
    await (await openTargetStorage(target)).close();
    const receiver = await startReceiverProcess({ redisUrl, prefix, spoolDir: join(dir, 'spool') });
    processes.push(receiver);
    const tray = await startTrayProcess({ redisUrl, storage: target, prefix });
    processes.push(tray);

    const tag = uniqueName('li');
    // Dated ahead, a minute plus 10 ms an event: the first half is sent and drained well inside
    // that even on this machine loaded, so every action is dated after the mutes put between the
    // halves (dated earlier, an action is never held back, and the mutes would test nothing).
    const baseCount = Math.round(eventCount * (1 - REMOVAL_SHARE));
    const startAt = Date.now() + 60_000 + eventCount * 10;
    const base = buildLoadSequence({ count: baseCount, tag, startAt, seed: SEED });
    const events = withRemovals(base.events, REMOVAL_SHARE, SEED);
    sent = events.length;
    const half = Math.floor(events.length / 2);
    const [firstHalf, secondHalf, last] = [events.slice(0, half), events.slice(half, -1), events.at(-1)!];
    const options = { urls: [receiver.url], secret: faultSecret };
    const drain = async () => {
      while ((await queueCounts(redisUrl, prefix)).pending > 0) await sleep(100);
    };
    const callerOf = async (userId: string): Promise<Caller> => ({
      port: tray.port,
      userId,
      token: await trayToken(userId, '2h'),
    });
    const steps: RunStep[] = [];
    const record = (operation: TrayOperation) => steps.push({ operation });
    const uid = (n: number) => `${tag}-u${n}`;

    deliveries.push(...(await sendEvents(firstHalf, { ...options, concurrency })));
    await drain();
    steps.push({ events: firstHalf });

    // Between the halves, with the queue empty: mutes, and marks on records the second half will
    // touch again (new activity on an archived or snoozed record). The mutes are judged by the
    // events' createdAt: every action of the sequence is dated after these calls, so a mute put now
    // holds back the second half's actions on its target up to its `until`, and one removed now
    // holds back nothing; both apply to whatever arrives later, whenever the worker meets it.
    // The createdAt of the base sequence's event at three quarters (event n is dated startAt + n ms).
    const muteUntil = startAt + Math.round(baseCount * 0.75);
    const mutes: [number, { targetType: 'post' | 'community' | 'user'; targetId: string }, number | null][] =
      [
        [1, { targetType: 'post', targetId: `${tag}-p1` }, muteUntil],
        [3, { targetType: 'community', targetId: `${tag}-club` }, null],
        [0, { targetType: 'user', targetId: uid(9) }, null],
        [7, { targetType: 'post', targetId: `${tag}-p7` }, null],
      ];
    for (const [owner, muteTarget, until] of mutes) {
      const caller = await callerOf(uid(owner));
      const put = (await call(caller, 'PUT', '/mutes', { ...muteTarget, ...(until ? { until } : {}) })) as {
        createdAt: number;
      };
      record({ kind: 'mute', userId: caller.userId, target: muteTarget, until, now: put.createdAt });
    }
    {
      // Unmuted at once: post 7's later comments reach its owner again.
      const caller = await callerOf(uid(7));
      const now = Date.now();
      await call(caller, 'DELETE', '/mutes', { targetType: 'post', targetId: `${tag}-p7` });
      record({
        kind: 'unmute',
        userId: caller.userId,
        target: { targetType: 'post', targetId: `${tag}-p7` },
        now,
      });
    }
    const longUntil = Date.now() + 3_600_000;
    for (const [owner, mark] of [
      [0, 'archive'],
      [2, 'snooze'],
      [4, 'seen'],
    ] as const) {
      const caller = await callerOf(uid(owner));
      const ids = (await keysOf(caller, 'inbox')).slice(0, 20);
      if (ids.length === 0) continue;
      const now = Date.now();
      await call(caller, 'POST', `/records/${mark}`, mark === 'snooze' ? { ids, until: longUntil } : { ids });
      record(
        mark === 'snooze'
          ? { kind: 'snooze', userId: caller.userId, ids, until: longUntil, now }
          : { kind: mark, userId: caller.userId, ids, now },
      );
    }

    // While the second half flows: archives and snoozes (short ones wake during the run) of records
    // no later event touches, a mention in a post on someone's feed that no removal undoes.
    const postIds = (list: readonly LoadEvent[], event: string) =>
      list
        .filter((sent) => sent.event === event)
        .map((sent) => (JSON.parse(sent.body) as { data: { post: { postId: string } } }).data.post.postId);
    const deletedPosts = new Set(postIds(events, 'post.didDelete'));
    // Posts of the first half (already applied), on their author's feed, that no removal undoes.
    const quietPosts = new Set(
      postIds(firstHalf, 'post.didCreate').filter(
        (postId) => postId.startsWith(`${tag}-up`) && !deletedPosts.has(postId),
      ),
    );
    const quiet = (key: string) => {
      const identity = decodeRecordKey(key);
      return identity?.verb === 'mention' && quietPosts.has(identity.targetId);
    };
    const marks = (async () => {
      let latestWake = 0;
      let turn = 0;
      for (let n = 8; n < base.users.length - 1; n += 1) {
        const caller = await callerOf(uid(n));
        for (const key of (await keysOf(caller, 'all')).filter(quiet)) {
          const now = Date.now();
          const kind = (['archive', 'snooze', 'snooze', 'seen'] as const)[turn % 4]!;
          // Every other snooze is short: it wakes while the run goes on.
          const until = turn % 4 === 1 ? now + 2_000 + (turn % 3) * 1_000 : longUntil;
          turn += 1;
          await call(
            caller,
            'POST',
            `/records/${kind}`,
            kind === 'snooze' ? { ids: [key], until } : { ids: [key] },
          );
          record(
            kind === 'snooze'
              ? { kind, userId: caller.userId, ids: [key], until, now }
              : { kind, userId: caller.userId, ids: [key], now },
          );
          if (kind === 'snooze' && until !== longUntil) latestWake = Math.max(latestWake, until);
        }
      }
      return latestWake;
    })();
    deliveries.push(...(await sendEvents(secondHalf, { ...options, concurrency })));
    const latestWake = await marks;
    deliveries.push(...(await sendEvents([last], { ...options, concurrency: 1 })));
    steps.push({ events: [...secondHalf, last] });
    await drain();
    failedJobs = (await queueCounts(redisUrl, prefix)).failed;
    // The wake-up runs every 250 ms (TRAY_WAKE_INTERVAL_MS): every short snooze is over by now.
    await sleep(Math.max(0, latestWake - Date.now()) + 1_500);
    const now = Date.now();
    const model = inboxModel(steps, now);
    const check = await checkInboxAgainstModel(tray.port, model, base.users, now);
    mismatches = check.mismatches;
    reportFigures('sustained load with the inbox', {
      events: sent,
      mix: tally(events.map((event) => event.event)),
      statuses: tally(deliveries.map((d) => d.status)),
      failedJobs,
      users: check.users,
      modelRecords: check.records,
      operations: tally(steps.flatMap((step) => ('operation' in step ? [step.operation.kind] : []))),
      recordsChangedBy: (changedBy = {
        removals: recordsChangedBy(model, steps, ['removal'], base.users, now),
        mutes: recordsChangedBy(model, steps, ['mute', 'unmute'], base.users, now),
        unmute: recordsChangedBy(model, steps, ['unmute'], base.users, now),
        marks: recordsChangedBy(model, steps, ['archive', 'snooze', 'seen'], base.users, now),
      }),
      mismatches: mismatches.length,
    });
  });

  it('acknowledges every event and fails no job', () => {
    expect(tally(deliveries.map((d) => d.status))).to.deep.equal({ 200: sent });
    expect(failedJobs).to.equal(0);
  });

  it('has removals, mutes, the unmute and the marks each change records (else the check would miss them)', () => {
    for (const [kind, records] of Object.entries(changedBy)) expect(records, kind).to.be.above(0);
  });

  it("leaves every user's four views and both counts equal to the reference tray", () => {
    expect(mismatches.slice(0, 10)).to.deep.equal([]);
  });
});
