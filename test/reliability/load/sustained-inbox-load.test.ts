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
import { actionDatedBetween, planMutes, type MuteCall } from './support/mute-mix.ts';
import { withRemovals } from './support/removal-mix.ts';

/** RELIABILITY_LOAD_EVENTS, as in sustained-load.test.ts: the target is 20,000, CI runs the default. */
const eventCount = Number(process.env.RELIABILITY_LOAD_EVENTS ?? 2_000);
const concurrency = Number(process.env.RELIABILITY_LOAD_CONCURRENCY ?? 48);
/** Removals' share of the events sent. */
const REMOVAL_SHARE = 0.1;
/** Events between two stops for mutes calls (a mute put at each, an earlier one removed at every other). */
const MUTE_EVERY = 100;
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
    // Dated ahead, a minute plus 30 ms an event, so the tray meets the actions before their time
    // even with the run's stops for the mutes calls: a mute put during the run is judged against
    // actions dated after it, and holds back the ones it covers.
    const baseCount = Math.round(eventCount * (1 - REMOVAL_SHARE));
    const startAt = Date.now() + 60_000 + eventCount * 30;
    const base = buildLoadSequence({ count: baseCount, tag, startAt, seed: SEED });
    const events = withRemovals(base.events, REMOVAL_SHARE, SEED);
    sent = events.length;
    const plan = planMutes(events, MUTE_EVERY, SEED);
    const half = Math.floor(events.length / 2);
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

    /** One planned mutes call, made through the API and recorded where the tray met it. */
    const mutesCall = async (planned: MuteCall) => {
      const caller = await callerOf(planned.userId);
      const { target } = planned;
      if (planned.kind === 'mute') {
        // A span planned to end at an action's time; never before now (the API refuses a past end).
        const until = planned.until === null ? null : Math.max(planned.until, Date.now() + 10_000);
        const put = (await call(caller, 'PUT', '/mutes', { ...target, ...(until ? { until } : {}) })) as {
          createdAt: number;
        };
        record({ kind: 'mute', userId: caller.userId, target, until, now: put.createdAt });
        return;
      }
      // The span ends at the tray's clock during the call, which the answer does not say: exact
      // only while no action is dated within the call (the actions are dated ahead of the run).
      const now = Date.now();
      await call(caller, 'DELETE', '/mutes', target);
      if (actionDatedBetween(plan, now, Date.now()))
        throw new Error('an action is dated within a DELETE v3/mutes call: the run fell behind the dating');
      record({ kind: 'unmute', userId: caller.userId, target, now });
    };

    /**
     * Sends events[from, to) in order, stopping at each boundary with planned mutes calls: once
     * every event sent so far is applied (the queue empty), the calls are made, then the sending
     * goes on. So each call falls where the model puts it, between the events sent before and after,
     * whichever way the worker's concurrent jobs interleave.
     */
    const sendWithMutes = async (from: number, to: number) => {
      const stops = [...plan.calls.keys()].filter((at) => at > from && at < to).sort((a, b) => a - b);
      let start = from;
      for (const stop of [...stops, to]) {
        if (stop > start) {
          const segment = events.slice(start, stop);
          deliveries.push(...(await sendEvents(segment, { ...options, concurrency })));
          steps.push({ events: segment });
          start = stop;
        }
        const planned = plan.calls.get(stop) ?? [];
        if (planned.length === 0) continue;
        await drain();
        for (const one of planned) await mutesCall(one);
      }
    };

    await sendWithMutes(0, half);
    await drain();

    // Between the halves, with the queue empty: marks on records the second half will touch again
    // (new activity on an archived or snoozed record).
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
      postIds(events.slice(0, half), 'post.didCreate').filter(
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
    await sendWithMutes(half, events.length - 1);
    const latestWake = await marks;
    deliveries.push(...(await sendEvents([events.at(-1)!], { ...options, concurrency: 1 })));
    steps.push({ events: [events.at(-1)!] });
    await drain();
    failedJobs = (await queueCounts(redisUrl, prefix)).failed;
    // The wake-up runs every 250 ms (TRAY_WAKE_INTERVAL_MS): every short snooze is over by now on a
    // quiet machine. The model wakes each at its until; a wake-up that a loaded machine delays (its
    // loop's write waits for the database) is checked again, for a few seconds, before it counts.
    await sleep(Math.max(0, latestWake - Date.now()) + 1_500);
    const settleBy = Date.now() + 10_000;
    let now = Date.now();
    let model = inboxModel(steps, now);
    let check = await checkInboxAgainstModel(tray.port, model, base.users, now);
    while (check.mismatches.length > 0 && Date.now() < settleBy) {
      await sleep(500);
      now = Date.now();
      model = inboxModel(steps, now);
      check = await checkInboxAgainstModel(tray.port, model, base.users, now);
    }
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

  it('has removals, mutes, unmutes and the marks each change records (else the check would miss them)', () => {
    for (const [kind, records] of Object.entries(changedBy)) expect(records, kind).to.be.above(0);
  });

  it("leaves every user's four views and both counts equal to the reference tray", () => {
    expect(mismatches.slice(0, 10)).to.deep.equal([]);
  });
});
