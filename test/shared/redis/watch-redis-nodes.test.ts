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

  /**
   * Watches a connection whose server hangs from the start, with a check that reads INFO: what the
   * watch told, how many checks it sent and how many were answered.
   */
  async function watchHung(checkBudgetMs: number) {
    const { redis, hang } = hungRedis();
    const seen = { told: [] as Error[], asked: 0, answered: 0 };
    hang();
    const started = Date.now();
    await watchRedisNodes(
      redis,
      async (node) => {
        seen.asked += 1;
        await node.info('memory');
        seen.answered += 1;
      },
      (error) => seen.told.push(error),
      { checkBudgetMs },
    );
    return { redis, seen, startupMs: Date.now() - started };
  }

  it('gives a check up after its budget: start-up goes on and the failure is told', async () => {
    const { seen, startupMs } = await watchHung(300);
    expect(startupMs).to.be.lessThan(5_000);
    expect(seen.told.map((error) => error.name)).to.deep.equal(['RedisTimeoutError']);
  });

  it('asks a server whose check is still unanswered nothing more, however often it is told to', async () => {
    const { redis, seen } = await watchHung(200);
    // What a cluster's slot-map refreshes do every few seconds: the watch is told to check again.
    for (let n = 0; n < 3; n++) {
      redis.emit('ready');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(seen.asked, 'checks sent').to.equal(1);
    expect(seen.told).to.have.length(1);
  });

  it('asks again when the connection is made again, and that check passes', async () => {
    const { redis, seen } = await watchHung(1_000);
    expect(seen.answered).to.equal(0);
    // A new connection through the proxy is carried: the check at its 'ready' is answered.
    redis.disconnect(true);
    const until = Date.now() + 5_000;
    while (seen.answered === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    // ioredis also sends the given-up INFO again on the new connection, so it may answer too.
    expect(seen.answered).to.be.at.least(1);
    expect(seen.told).to.have.length(1);
  });
});
