import { expect } from 'chai';
import { parseClusterNodes } from '../../../shared/config/parse-cluster-nodes.ts';

describe('parseClusterNodes', () => {
  it('reads host:port seeds, IPv6 hosts in brackets, spaces around commas ignored', () => {
    expect(parseClusterNodes('10.0.0.1:7000, redis-b.internal:7001,[::1]:7002')).to.deep.equal([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  for (const [text, message] of [
    ['10.0.0.1', 'entry 1 is not host:port'],
    ['a:1,10.0.0.1:0', 'entry 2 is not host:port'],
    ['10.0.0.1:70000', 'entry 1 is not host:port'],
    ['redis://10.0.0.1:7000', 'entry 1 is not host:port'],
    ['a:1,,b:2', 'entry 2 is empty'],
    ['a:1,a:1', '"a:1" is listed twice'],
  ] as const) {
    it(`refuses ${JSON.stringify(text)} naming the entry`, () => {
      expect(() => parseClusterNodes(text)).to.throw(message);
    });
  }

  // Seeds written as URLs with the password in them (as other cluster clients take them): the
  // error goes to the log, so it must not repeat the entry.
  it('refuses a seed holding a password without repeating it, and says where credentials go', () => {
    for (const text of ['redis://:p4ss-w0rd@10.0.0.1:6379', ':p4ss-w0rd@10.0.0.1:6379']) {
      let message = '';
      try {
        parseClusterNodes(text);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, text).to.include('entry 1 is not host:port').and.include('REDIS_URL');
      expect(message, text).not.to.include('p4ss');
    }
  });
});
