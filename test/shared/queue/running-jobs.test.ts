import type Bull from 'bull';
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { mock } from 'node:test';
import { trackJobHandlers, trackRunningJobs } from '../../../shared/queue/running-jobs.ts';

// The count's rules against bull's local events, emitted here as bull emits them (queue.js): a
// job's end counts once written ('completed', 'failed'), or 2 s after its handler settled when
// bull could write none. The shutdown tests run it against real queues (worker failures).
describe('trackRunningJobs', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());
  const job = (id: string) => ({ id }) as unknown as Bull.Job;

  it('counts a job from active until bull reports its end written', async () => {
    const queue = new EventEmitter();
    const running = trackRunningJobs(queue as unknown as Bull.Queue);
    queue.emit('active', job('a'), Promise.resolve());
    queue.emit('active', job('b'), Promise.resolve());
    expect(running()).to.equal(2);
    queue.emit('completed', job('a'), {});
    queue.emit('failed', job('b'), new Error('its own'));
    expect(running()).to.equal(0);
  });

  // bull emits neither when it cannot write the end (a lost lock): counted for good, every later
  // shutdown with a parked job waited its whole bound.
  it('stops counting a job whose end bull never reported, a while after its handler settled', async () => {
    const queue = new EventEmitter();
    const running = trackRunningJobs(queue as unknown as Bull.Queue);
    queue.emit('active', job('lost'), Promise.resolve());
    await Promise.resolve();
    mock.timers.tick(1_999);
    expect(running()).to.equal(1);
    mock.timers.tick(1);
    expect(running()).to.equal(0);
  });

  it('keeps counting a rerun of the same job past the earlier run’s grace', async () => {
    const queue = new EventEmitter();
    const running = trackRunningJobs(queue as unknown as Bull.Queue);
    queue.emit('active', job('again'), Promise.reject(new Error('failed')));
    await Promise.resolve();
    queue.emit('failed', job('again'), new Error('failed'));
    queue.emit('active', job('again'), new Promise(() => undefined));
    mock.timers.tick(5_000);
    expect(running()).to.equal(1);
  });

  it('counts a parked job (its handler never settles) for good', () => {
    const queue = new EventEmitter();
    const running = trackRunningJobs(queue as unknown as Bull.Queue);
    queue.emit('active', job('parked'), new Promise(() => undefined));
    mock.timers.tick(60_000);
    expect(running()).to.equal(1);
  });
});

describe('trackJobHandlers', () => {
  const job = (id: string) => ({ id }) as unknown as Bull.Job;

  it('counts a job from active until its handler settles, resolved or rejected, whatever bull writes', async () => {
    const queue = new EventEmitter();
    const handlers = trackJobHandlers(queue as unknown as Bull.Queue);
    const done = Promise.withResolvers<undefined>();
    const failed = Promise.withResolvers<undefined>();
    queue.emit('active', job('a'), done.promise);
    queue.emit('active', job('b'), failed.promise);
    queue.emit('completed', job('a'), {});
    expect(handlers()).to.equal(2);
    done.resolve(undefined);
    failed.reject(new Error('its own'));
    await Promise.allSettled([done.promise, failed.promise]);
    await Promise.resolve();
    expect(handlers()).to.equal(0);
  });
});
