import { expect } from 'chai';
import {
  commentDidCreate,
  commentDidDelete,
  communityMembership,
  postDidCreate,
  postDidDelete,
  reactionDidAdd,
  reactionDidRemove,
  userGlobalBan,
} from '../../../tray-service/domain/event-schemas.ts';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import {
  commentDeleteEvent,
  commentEvent,
  membershipEvent,
  postDeleteEvent,
  postEvent,
  reactionEvent,
  reactionRemoveEvent,
} from '../worker/event-builder.ts';

const AT = Date.UTC(2026, 10, 29, 2, 18);

// The contract says only "Timestamps are ISO 8601 strings" (docs/contract.md#event-catalogue).
describe('event schemas: event times', () => {
  /** Every time field of every event that has one, with a payload holding `time` there. */
  const fields = [
    ['post.createdAt', postDidCreate, (t: string) => withTime(postEvent().data, ['post', 'createdAt'], t)],
    [
      'comment.createdAt',
      commentDidCreate,
      (t: string) => withTime(commentEvent().data, ['comment', 'createdAt'], t),
    ],
    [
      'reaction.createdAt',
      reactionDidAdd,
      (t: string) => withTime(reactionEvent().data, ['reaction', 'createdAt'], t),
    ],
    [
      'createdAt (join)',
      communityMembership,
      (t: string) => membershipEvent('join', ['u-eve'], 'c-hike', t).data,
    ],
    ['createdAt (ban)', userGlobalBan, (t: string) => ({ userIds: ['u-eve'], createdAt: t })],
    ['deletedAt (post)', postDidDelete, (t: string) => withTime(postDeleteEvent().data, ['deletedAt'], t)],
    [
      'deletedAt (comment)',
      commentDidDelete,
      (t: string) => withTime(commentDeleteEvent().data, ['deletedAt'], t),
    ],
    ['removedAt', reactionDidRemove, (t: string) => withTime(reactionRemoveEvent().data, ['removedAt'], t)],
  ] as const;

  const accepted: [string, number][] = [
    ['2026-11-29T02:18:00.000Z', AT],
    ['2026-11-29T02:18:00Z', AT],
    ['2026-11-29T02:18Z', AT],
    ['2026-11-29T02:18:00+0000', AT],
    ['2026-11-29T02:18:00+00', AT],
    ['2026-11-29T02:18:00-00:00', AT],
    ['2026-11-29T03:18:00+01:00', AT],
    ['2026-11-29T03:18+0100', AT],
    ['2026-11-28T21:48:00.5-0430', AT + 500],
    ['2026-11-29T02:18:00.097000Z', AT + 97],
    ['2026-11-29T02:18:00.0979999999+00', AT + 97],
    ['2026-11-29T02:18:00,25Z', AT + 250],
    ['20261129T021800Z', AT],
    ['20261129T0318+01', AT],
  ];
  for (const [name, schema, payload] of fields) {
    it(`reads ${name} in any ISO 8601 form with an offset as epoch ms, kept to the millisecond`, () => {
      for (const [time, ms] of accepted) {
        const result = schema.safeParse(payload(time));
        expect(result.success, `${time}: ${result.error?.message}`).to.equal(true);
        expect(timeOf(result.data, name), time).to.equal(ms);
      }
    });
  }

  const refused: [string, RegExp][] = [
    // No offset: the same text names different instants in different zones.
    ['2026-11-29T02:18:00', /^expected an offset after the time \(Z, ±hh:mm, ±hhmm or ±hh\)/],
    ['2026-11-29T02:18:00.123456', /^expected an offset after the time/],
    ['2026-11-29', /^expected a time after the date/],
    ['2026-02-30T02:18:00Z', /^expected a date and time that exist \(no February 30, no hour 24\)$/],
    ['2026-11-29T24:00:00Z', /^expected a date and time that exist/],
    ['2026-11-29T02:18:00+24:00', /^expected a date and time that exist/],
    ['2026-11-29T02:18:00+1', /^expected an ISO 8601 date-time/],
    ['2026-11-29 02:18:00Z', /^expected an ISO 8601 date-time/],
    ['2026-11-29T0218:00Z', /^expected an ISO 8601 date-time/],
    ['soon', /^expected an ISO 8601 date-time with its offset/],
  ];
  it('refuses a time without an offset, a date alone, a mixed or partial form and a day that does not exist, naming the problem', () => {
    for (const [time, message] of refused) {
      const result = commentDidCreate.safeParse(
        withTime(commentEvent().data, ['comment', 'createdAt'], time),
      );
      expect(result.success, time).to.equal(false);
      expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])[0], time).to.satisfy(
        ([path, text]: [string, string]) => path === 'comment.createdAt' && message.test(text),
      );
    }
  });

  it('maps an activity at the instant its time names, whatever the form', () => {
    const receivedAt = AT + 3_600_000;
    for (const [time, ms] of accepted) {
      const mapped = mapEvent({ ...commentEvent({ createdAt: time }), receivedAt });
      expect([mapped.status, mapped.activities[0]?.at], time).to.deep.equal(['applied', ms]);
    }
    // The epoch itself is a time, not a missing one: the join counts from it, not from its receipt.
    const join = mapEvent({
      ...membershipEvent('join', ['u-eve'], 'c-hike', '1970-01-01T00:00Z'),
      receivedAt,
    });
    expect(join.memberships.map((change) => change.at)).to.deep.equal([0]);
  });
});

function withTime(
  data: Record<string, unknown>,
  path: readonly string[],
  time: string,
): Record<string, unknown> {
  const copy = structuredClone(data);
  let into: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) into = into[key] as Record<string, unknown>;
  into[path.at(-1) as string] = time;
  return copy;
}

/** The parsed time of the field `name` names. */
function timeOf(data: unknown, name: string): unknown {
  const payload = data as Record<string, Record<string, unknown> | unknown>;
  const [field, inside] = name.split(' ')[0]!.split('.').reverse() as [string, string | undefined];
  const holder = inside === undefined ? payload : (payload[inside] as Record<string, unknown>);
  return holder[field];
}
