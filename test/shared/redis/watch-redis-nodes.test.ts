import { expect } from 'chai';
import { askAgain, watchRedisNodes } from '../../../shared/redis/watch-redis-nodes.ts';
import { useHungRedis } from '../../support/hung-redis.ts';

/** A server's error reply, as ioredis gives it (redis-errors' ReplyError). */
const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('watchRedisNodes: which failures to read a node are asked again', () => {
  it('not a refusal that will come again: NOPERM, an unknown or renamed command', () => {
    for (const message of [
      "NOPERM this user has no permissions to run the 'info' command",
      "ERR unknown command 'CONFIG', with args beginning with: 'GET' 'append*' ",
    ])
      expect(askAgain(reply(message)), message).to.equal(false);
  });

  it('anything that may pass: BUSY, LOADING, a lost connection', () => {
    for (const error of [
      reply('BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.'),
      reply('LOADING Redis is loading the dataset in memory'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
    ])
      expect(askAgain(error), error.message).to.equal(true);
  });
});

describe('watchRedisNodes: a server that stops answering', () => {
  const hungRedis = useHungRedis();

  it('gives a check up after its budget: start-up goes on and the failure is told', async () => {
    const { redis, hang } = hungRedis();
    const told: Error[] = [];
    hang();
    const started = Date.now();
    await watchRedisNodes(
      redis,
      async (node) => {
        await node.info('memory');
      },
      (error) => told.push(error),
      { checkBudgetMs: 300 },
    );
    expect(Date.now() - started).to.be.lessThan(5_000);
    expect(told.map((error) => error.name)).to.deep.equal(['RedisTimeoutError']);
  });

  it('asks a server whose check is still unanswered nothing more, however often it is told to', async () => {
    const { redis, hang } = hungRedis();
    const told: Error[] = [];
    let asked = 0;
    hang();
    await watchRedisNodes(
      redis,
      async (node) => {
        asked += 1;
        await node.info('memory');
      },
      (error) => told.push(error),
      { checkBudgetMs: 200 },
    );
    // What a cluster's slot-map refreshes do every few seconds: the watch is told to check again.
    for (let n = 0; n < 3; n++) {
      redis.emit('ready');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(asked, 'checks sent').to.equal(1);
    expect(told).to.have.length(1);
  });

  it('asks again when the connection is made again, and that check passes', async () => {
    const { redis, hang } = hungRedis();
    const told: Error[] = [];
    let answered = 0;
    hang();
    await watchRedisNodes(
      redis,
      async (node) => {
        await node.info('memory');
        answered += 1;
      },
      (error) => told.push(error),
      { checkBudgetMs: 1_000 },
    );
    expect(answered).to.equal(0);
    // A new connection through the proxy is carried: the check at its 'ready' is answered.
    redis.disconnect(true);
    const until = Date.now() + 5_000;
    while (answered === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    // ioredis also sends the given-up INFO again on the new connection, so it may answer too.
    expect(answered).to.be.at.least(1);
    expect(told).to.have.length(1);
  });
});
