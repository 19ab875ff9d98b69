import { expect } from 'chai';
import { createRecountSchedule, type RecountSchedule } from '../../../tray-service/live/recount-schedule.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live/recount-schedule', () => {
  let schedule: RecountSchedule | undefined;
  afterEach(() => schedule?.stop());

  function started(granularityMs = 1) {
    const fired: { at: number; users: string[] }[] = [];
    schedule = createRecountSchedule({
      now: Date.now,
      granularityMs,
      due: (users) => fired.push({ at: Date.now(), users: [...users].sort() }),
    });
    return { schedule, fired };
  }

  it('tells each user once at the time set, the users due together in one call', async () => {
    const { schedule, fired } = started();
    const start = Date.now();
    // Times far enough apart that a timer late by a loaded machine's hundreds of milliseconds
    // still fires them apart.
    schedule.set('b', start + 700);
    schedule.set('a', start + 60);
    schedule.set('c', start + 60);
    await sleep(1_200);
    expect(fired.map(({ users }) => users)).to.deep.equal([['a', 'c'], ['b']]);
    expect(fired[0]?.at).to.be.at.least(start + 60);
    expect(fired[1]?.at).to.be.at.least(start + 700);
    expect(schedule.size).to.equal(0);
  });

  it('keeps only the latest time of a user, and none once it is unset', async () => {
    const { schedule, fired } = started();
    const start = Date.now();
    schedule.set('a', start + 40);
    schedule.set('a', start + 700);
    schedule.set('b', start + 40);
    schedule.set('b', undefined);
    schedule.set('c', start + 750);
    schedule.set('c', start + 20);
    await sleep(1_200);
    expect(fired.map(({ users }) => users)).to.deep.equal([['c'], ['a']]);
    expect(fired[1]?.at).to.be.at.least(start + 700);
  });

  it('rounds each time up to its granularity, so users due within it are told together', async () => {
    const { schedule, fired } = started(500);
    const start = Math.ceil(Date.now() / 500) * 500 + 500;
    schedule.set('a', start + 1);
    schedule.set('b', start + 499);
    schedule.set('c', start + 501);
    await sleep(start + 1_500 - Date.now());
    expect(fired.map(({ users }) => users)).to.deep.equal([['a', 'b'], ['c']]);
    expect(fired[0]?.at).to.be.at.least(start + 500);
    expect(fired[1]?.at).to.be.at.least(start + 1_000);
  });

  it('tells many users, set in any order, each once and none before its time', async () => {
    const { schedule, fired } = started();
    const start = Date.now();
    const times = new Map(
      Array.from({ length: 300 }, (_, user) => [`u${user}`, start + 20 + ((user * 7919) % 200)]),
    );
    for (const [userId, at] of times) schedule.set(userId, at);
    await sleep(1_200);
    const told = fired.flatMap(({ at, users }) => users.map((userId) => ({ at, userId })));
    expect(told.map(({ userId }) => userId).sort()).to.deep.equal([...times.keys()].sort());
    for (const { at, userId } of told) expect(at, userId).to.be.at.least(times.get(userId) ?? Infinity);
  });

  it('holds one timer, and does not keep the times it replaced beyond a bound', async () => {
    const { schedule, fired } = started();
    const start = Date.now();
    for (let round = 0; round < 50; round += 1)
      for (let user = 0; user < 100; user += 1) schedule.set(`u${user}`, start + 60_000 + round);
    expect(schedule.size).to.equal(100);
    expect(schedule.pending).to.be.at.most(300);
    expect(fired).to.deep.equal([]);
  });

  it('tells nothing once stopped', async () => {
    const { schedule, fired } = started();
    schedule.set('a', Date.now() + 30);
    schedule.stop();
    await sleep(80);
    expect(fired).to.deep.equal([]);
  });
});
