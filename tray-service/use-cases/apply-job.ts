import { jobScope } from '../../shared/async/job-scope.ts';
import type { Activity } from '../domain/activity.ts';
import type { BanChange } from '../domain/ban-change.ts';
import { FOREIGN, type JudgedEvent } from '../domain/judged-event.ts';
import { mapEvent } from '../domain/map-event.ts';
import { mostSevere } from '../domain/event-moderation.ts';
import type { ModerationAction } from '../domain/moderation-action.ts';
import {
  isPlatformDelivery,
  PLATFORM_SCHEME_ONLY,
  type DeliveryScheme,
  type PlatformWebhooks,
} from '../domain/platform-webhooks.ts';
import { RESTATABLE_STATUSES, type StoredEvent } from '../domain/stored-event.ts';
import { idWithinLimit } from '../domain/event-id.ts';
import type { InboxRecord } from '../domain/inbox-record.ts';
import { unexpired } from '../domain/unexpired.ts';
import { storableJson } from '../domain/storable-json.ts';
import type { EventOutcome, RemovedRecord, TrayStorage, WriteContext } from '../storage/port.ts';
import { createBlockList } from './block-list.ts';

/** A verified delivery as the receiver queued it. */
export interface JobDelivery {
  /** The receiver's dedupe key: the stored event's key, and the job every write of it runs for. */
  dedupeKey: string;
  webhook: string;
  /**
   * How the receiver verified it; absent on a job an older receiver queued, and on a stored event's
   * replay (whose stored status says whether it is the platform's).
   */
  scheme?: DeliveryScheme;
  /**
   * A replay of an event stored as another sender's (`foreign`): never applied, also when its row
   * expired or was purged after the replay read it (and is stored anew from this delivery).
   */
  storedForeign?: boolean;
  /** ISO 8601 time the receiver accepted it. */
  receivedAt: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Schedules one community's post for a fan-out: `fanOut` is called with that post, or with it and
 * other posts of the same `key` that waited meanwhile (the worker gathers them and bounds how many
 * fan-outs run at once). Resolves once the post's fan-out is done.
 */
export type ScheduleFanOut = (
  key: string,
  post: Activity,
  fanOut: (posts: readonly Activity[]) => Promise<void>,
) => Promise<void>;

export interface ApplyJobDeps {
  storage: Pick<TrayStorage, 'events' | 'bans' | 'writes' | 'clears' | 'blockList' | 'deletedUsers'>;
  eventsRetentionDays: number;
  trayRetentionDays: number;
  /** NETWORK_ID: the network whose block list a deleted user's own list is removed from. */
  networkId: string;
  /** Whose events are applied (TRAY_PLATFORM_WEBHOOKS); unset: deliveries of the platform's scheme. */
  platformWebhooks?: PlatformWebhooks;
  /**
   * Publishes stored ban changes to the API instances. Without it a ban event fails its job rather
   * than be stored but never enforced.
   */
  publishBans?: (changes: readonly BanChange[]) => Promise<void>;
  /** Each post alone, at once, without it. */
  scheduleFanOut?: ScheduleFanOut;
  /**
   * Runs after the event is stored and applied (moderation), before it is marked applied; must be
   * idempotent: a retry, redelivery or replay runs it again. May tell the most severe action its
   * rules decided (the event's moderation outcome).
   */
  onStored?: (event: StoredEvent) => Promise<ModerationAction | undefined>;
  /**
   * Told once per event, when a job first finishes it (stored, applied, moderated): the live tail
   * of the events console. Not on a retry or replay of an event already finished.
   */
  onApplied?: (event: StoredEvent) => Promise<void>;
  /**
   * Told of the records each write changed, once durable (live streams), but those already expired
   * at the write's clock.
   */
  onWritten?: (records: readonly InboxRecord[]) => Promise<void>;
  /** Told of the records a removal took away, once durable (live streams). */
  onRemoved?: (records: readonly RemovedRecord[]) => Promise<void>;
  /** Told of a tray emptied whole at `at`, once durable: a deleted user's own (live streams). */
  onCleared?: (userId: string, at: number) => Promise<void>;
  /** The tray's clock (epoch ms); tests pin it. */
  now?: () => number;
}

/** What one job did with its event. */
export interface AppliedJob {
  /** The event as first stored (with a replay's new verdict, when it stored one: see restates). */
  event: StoredEvent;
  /**
   * Whether this job first finished the event (made its first applied mark): true for one job per
   * event, false for a retry after that, a redelivery or a replay. What is said once per event
   * (the announcement, the events metric) is said by that job alone.
   */
  first: boolean;
}

const alone: ScheduleFanOut = (_key, post, fanOut) => fanOut([post]);

/**
 * What the live streams hear of a write at `now`: each record it wrote that is still shown. A write
 * may change a record past its retention (a deleted user's name is rewritten there too, so none
 * keeps it), but readers never see an expired record, so no stream may be told of one
 * (docs/tray-engine.md#retention). Decided here, once, whatever the storage adapter wrote.
 */
function tellUnexpired(
  onWritten: (records: readonly InboxRecord[]) => Promise<void>,
  retentionDays: number,
  now: number,
): (records: readonly InboxRecord[]) => Promise<void> {
  return async (records) => {
    const shown = records.filter((record) => unexpired(record, retentionDays, now));
    if (shown.length > 0) await onWritten(shown);
  };
}

/** The outcome stored with the event: its status, and what a late join looks up. */
function outcomeOf(mapped: JudgedEvent): EventOutcome {
  const post = mapped.activities.find((activity) => activity.audience.kind === 'community');
  return {
    status: mapped.status,
    ...(mapped.error === undefined ? {} : { error: mapped.error }),
    ...(mapped.subject?.userId === undefined ? {} : { userId: mapped.subject.userId }),
    ...(mapped.subject?.communityId === undefined ? {} : { communityId: mapped.subject.communityId }),
    ...(post?.audience.kind === 'community'
      ? { communityPost: { communityId: post.audience.communityId, at: post.at, activity: post } }
      : {}),
  };
}

/**
 * Whether `outcome` is a new verdict on an event stored under one that applied nothing: a replay
 * whose mapping changed since. The ids are compared as storage keeps them (idWithinLimit).
 */
function restates(stored: StoredEvent, outcome: EventOutcome): boolean {
  return (
    RESTATABLE_STATUSES.includes(stored.status) &&
    (stored.status !== outcome.status ||
      stored.error !== outcome.error ||
      stored.userId !== idWithinLimit(outcome.userId) ||
      stored.communityId !== idWithinLimit(outcome.communityId))
  );
}

/**
 * One queue job (docs/tray-engine.md): store the raw event, map it if it is the platform's (another
 * sender's is stored as `foreign` and applied never, not by a retry or a replay either), apply it
 * (bans, memberships, profiles, personal activities, community posts), hand it to the moderation
 * hook, then mark it applied (the job's last durable step) and, on the first mark, announce it.
 * Permanent problems (unknown name, invalid payload) are stored as a status and the job completes;
 * anything thrown is transient and the queue retries it. Every step is idempotent, so a retry after a
 * partial run leaves the same state. It all runs in the job's scope (shared/async/job-scope.ts), so
 * storage can tell a retry of this job from another job's write without the port naming how.
 */
export function applyJob(
  job: JobDelivery,
  deps: ApplyJobDeps,
  options: ApplyJobOptions = {},
): Promise<AppliedJob> {
  return jobScope.run(job.dedupeKey, () => applyInScope(job, deps, options));
}

export interface ApplyJobOptions {
  /**
   * Who runs it: one queue job attempt, the same for every run of that attempt (EventsPort
   * markApplied's `by`). A run after one whose applied mark committed but whose answer was lost
   * then learns its attempt made the first mark, and the event is counted and announced once.
   */
  by?: string;
}

async function applyInScope(
  delivered: JobDelivery,
  deps: ApplyJobDeps,
  options: ApplyJobOptions,
): Promise<AppliedJob> {
  // Before anything reads it: the same text for the mapping, the stored event and every adapter.
  const job = { ...delivered, event: storableJson(delivered.event), data: storableJson(delivered.data) };
  const now = deps.now ?? Date.now;
  const receivedAt = new Date(job.receivedAt);
  const platform =
    job.storedForeign !== true && isPlatformDelivery(job, deps.platformWebhooks ?? PLATFORM_SCHEME_ONLY);
  const judged = platform
    ? mapEvent({ event: job.event, data: job.data, receivedAt: receivedAt.getTime() })
    : FOREIGN;
  const outcome = outcomeOf(judged);
  const first = await deps.storage.events.store(
    { key: job.dedupeKey, event: job.event, data: job.data, webhook: job.webhook, receivedAt },
    outcome,
    { retentionDays: deps.eventsRetentionDays, now: new Date(now()) },
  );
  // An event stored before (the platform's delivery again, past the dedupe window): a date past its
  // receipt counts from the first one, as a replay's does (event-time.ts).
  const asStored =
    platform && first.receivedAt.getTime() !== receivedAt.getTime()
      ? mapEvent({
          event: job.event,
          data: job.data,
          receivedAt: receivedAt.getTime(),
          firstReceivedAt: first.receivedAt.getTime(),
        })
      : judged;
  // A sender's verdict stored first stands: a replay carries no scheme, and a stored event is judged
  // by the name alone then; one first found another sender's stays so, whatever the setting says now.
  const mapped = first.status === 'foreign' ? FOREIGN : asStored;
  if (mapped.bans) {
    if (!deps.publishBans) throw new Error('applyJob: a ban event needs publishBans to publish it');
    // Durable first: a crash between the two leaves the job to be retried, and both steps keep
    // only the newest change, so the retry publishes what storage holds.
    await deps.storage.bans.apply(mapped.bans);
    await deps.publishBans(mapped.bans);
  }
  const context = (): WriteContext => {
    const at = now();
    const { onWritten } = deps;
    return {
      now: at,
      // A fan-out of many rounds stamps each at its own time (WriteContext.clock).
      clock: now,
      retentionDays: deps.trayRetentionDays,
      ...(onWritten ? { onWritten: tellUnexpired(onWritten, deps.trayRetentionDays, at) } : {}),
      ...(deps.onRemoved ? { onRemoved: deps.onRemoved } : {}),
    };
  };
  const { writes } = deps.storage;
  // Joins before the posts of the same job: a join stored late backfills the posts it missed.
  if (mapped.memberships.length > 0) await writes.applyMemberships(mapped.memberships, context());
  if (mapped.profiles.length > 0) {
    await writes.applyProfiles(mapped.profiles, context());
    // A deletion emptied each deleted user's own tray. Kept as a clear, as v3/delete-all keeps one,
    // so their streams (their token stays valid until it expires) empty their lists too, now and
    // when they reconnect from before it. A retry keeps a later clear: the tray is empty either way.
    const deleted = new Set(
      mapped.profiles.filter((change) => change.deleted).map((change) => change.userId),
    );
    // Their own block list goes with them too (docs/tray-rules.md#deleted-users).
    const blockList = createBlockList(deps.storage.blockList, deps.storage.deletedUsers, deps.networkId);
    for (const userId of deleted) {
      const at = now();
      await deps.storage.clears.record(userId, at);
      await deps.onCleared?.(userId, at);
      await blockList.forget(userId);
    }
  }
  const personal = mapped.activities.filter((activity) => activity.audience.kind === 'user');
  if (personal.length > 0) await writes.applyPersonal(personal, context());
  const schedule = deps.scheduleFanOut ?? alone;
  for (const post of mapped.activities) {
    const { audience } = post;
    if (audience.kind !== 'community') continue;
    // Posts of one community and record group go out together (the same members' records).
    const key = JSON.stringify([post.verb, post.targetId, audience.communityId]);
    // A batch runs with its first post's `fanOut`, wherever the scheduler calls it: in that job's scope.
    const fanOut = (posts: readonly Activity[]) =>
      jobScope.run(job.dedupeKey, () => writes.fanOutPosts(audience.communityId, posts, context()));
    await schedule(key, post, fanOut);
  }
  // Removals after the event's own activities (it has none today): what they void goes whenever
  // it arrived.
  if (mapped.removals && mapped.removals.length > 0)
    await writes.applyRemovals(mapped.removals, { ...context(), eventKey: job.dedupeKey });
  // Moderation before the mark (it is idempotent, so a retry or replay runs it again harmlessly):
  // the mark is the job's last durable step, so only a job that finished every step makes the
  // first one. A job failing before it leaves the event unmarked, and its retry is then the first
  // to finish it: counted (its lag, receipt to here, into the minute's histogram) and announced once.
  // A replay whose mapping learned what an older release stored as applying nothing has applied
  // it now, so the stored verdict says so (the admin filters by status, user and community). Only
  // once every write is done: a replay that failed on the way keeps the old verdict, and replaying
  // the same filter again finds it.
  const verdict = asStored === judged ? outcome : outcomeOf(asStored);
  const stored =
    platform && restates(first, verdict)
      ? ((await deps.storage.events.restate(first.key, verdict, new Date(now()))) ?? first)
      : first;
  const decided = deps.onStored ? await deps.onStored(stored) : undefined;
  const appliedAt = new Date(now());
  const marked = await deps.storage.events.markApplied(stored, appliedAt, options.by);
  if (marked && deps.onApplied) {
    const moderation = mostSevere(stored.moderation, decided);
    await deps.onApplied({ ...stored, appliedAt, ...(moderation ? { moderation } : {}) });
  }
  return { event: stored, first: marked };
}
