import { expect } from 'chai';
import { createTrayClient, TrayApiError, type BlockEntry } from '../../../client/src/index.ts';
import { useClientTarget } from '../support/client-target.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';

describe('the client’s block-list methods against the tray API (real PostgreSQL and Redis)', () => {
  const target = useClientTarget();
  const clientOf = (userId: string) =>
    createTrayClient({ baseUrl: target.baseUrl, getToken: () => target.token(userId) });
  const blockedIds = (n: number) => Array.from({ length: n }, (_, i) => `u-${String(i).padStart(2, '0')}`);

  it('block() then blocked() yields every blocked user once, by user id, across pages of 20', async () => {
    const blocker = target.user('blocker');
    const client = clientOf(blocker);
    for (const id of [...blockedIds(25)].reverse()) await client.block(id);
    await client.block('u-00'); // blocking twice changes nothing
    await clientOf(target.user('someone-else')).block('u-99');

    const entries: BlockEntry[] = [];
    for await (const entry of client.blocked()) entries.push(entry);
    expect(entries.map((entry) => entry.blocked_userId)).to.deep.equal(blockedIds(25));
    expect(entries.every((entry) => entry.netid_uid === `${target.networkId}_${blocker}`)).to.equal(true);

    const first = await client.blockedPage();
    expect(first.results).to.have.lengthOf(20);
    const second = await client.blockedPage(first.paginationToken);
    expect(second.results.map((entry) => entry.blocked_userId)).to.deep.equal(blockedIds(25).slice(20));
    expect(second.paginationToken).to.equal(null);
  });

  it('checkBlocked() says, per id, whether the caller blocked it; unblock() lifts a block', async () => {
    const client = clientOf(target.user('checker'));
    await client.block('c-1');
    await client.block(42);
    expect(await client.checkBlocked(['c-1', '42', 'c-3'])).to.deep.equal({
      'c-1': true,
      42: true,
      'c-3': false,
    });
    await client.unblock('c-1');
    await client.unblock('never-blocked');
    expect(await client.checkBlocked(['c-1'])).to.deep.equal({ 'c-1': false });
  });

  it('blocked() yields no further entry once its signal aborts, inside a page too', async () => {
    const client = clientOf(target.user('abort-blocker'));
    for (const id of ['a-1', 'a-2', 'a-3']) await client.block(id);
    const controller = new AbortController();
    const taken: string[] = [];
    const walk = async () => {
      for await (const entry of client.blocked({ signal: controller.signal })) {
        taken.push(entry.blocked_userId);
        controller.abort(new Error('enough'));
      }
    };
    await expect(walk()).to.be.rejectedWith('enough');
    expect(taken).to.deep.equal(['a-1']);
  });

  // A query cannot carry a lone surrogate (URLSearchParams sends U+FFFD in its place): the service,
  // which refuses such an id in a body, would answer for another id.
  it('checkBlocked() refuses an id with a lone surrogate before sending anything', async () => {
    let sent = 0;
    const client = createTrayClient({
      baseUrl: target.baseUrl,
      getToken: () => target.token(target.user('surrogate-checker')),
      fetch: (input, init) => ((sent += 1), fetch(input, init)),
    });
    await expect(client.checkBlocked(['ok', 'x\ud800'])).to.be.rejectedWith(TypeError, /checkList/);
    expect(sent).to.equal(0);
  });

  it('blocking yourself is a TrayApiError 400 with the service’s message', async () => {
    const self = target.user('self');
    await expect(clientOf(self).block(self)).to.be.rejectedWith(TrayApiError).and.eventually.include({
      status: 400,
    });
  });
});

describe('the client’s blocked() against a scripted server', () => {
  const servers = useScriptedServers();

  it('throws a TrayApiError (code 0) when a page gives the token it was asked with, instead of looping', async () => {
    let pages = 0;
    const baseUrl = await servers.serve((_req, res) => {
      pages += 1;
      const entry: BlockEntry = { netid_uid: 'net_u', blocked_userId: 'b-1' };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ results: [entry], paginationToken: entry }));
    });
    const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
    const yielded: BlockEntry[] = [];
    const walk = async () => {
      for await (const entry of client.blocked()) yielded.push(entry);
    };
    await expect(walk())
      .to.be.rejectedWith(TrayApiError, /gave the token b-1 it had given before/)
      .and.eventually.include({ status: 200, code: 0 });
    expect(pages).to.equal(2);
    // The repeated page's entry is not handed out a second time.
    expect(yielded).to.have.lengthOf(1);
  });

  it('throws when the tokens go round in a cycle, instead of looping', async () => {
    let pages = 0;
    const baseUrl = await servers.serve((_req, res) => {
      pages += 1;
      // b-1, b-2, b-1, b-2...: each differs from the one before it.
      const entry: BlockEntry = { netid_uid: 'net_u', blocked_userId: `b-${((pages - 1) % 2) + 1}` };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ results: [entry], paginationToken: entry }));
    });
    const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
    const yielded: string[] = [];
    const walk = async () => {
      for await (const entry of client.blocked()) yielded.push(entry.blocked_userId);
    };
    await expect(walk())
      .to.be.rejectedWith(TrayApiError, /gave the token b-1 it had given before/)
      .and.eventually.include({ status: 200, code: 0 });
    expect(pages).to.equal(3);
    expect(yielded).to.deep.equal(['b-1', 'b-2']);
  });
});
