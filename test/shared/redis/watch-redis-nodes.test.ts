import { expect } from 'chai';
import { askAgain } from '../../../shared/redis/watch-redis-nodes.ts';

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
