import { expect } from 'chai';
import { shownClusterNodes, shownUrl } from '../../../scripts/lib/shown-url.ts';

describe('shownUrl (the URLs npm start prints)', () => {
  it('replaces the password of a URL, and leaves one without a password as it is', () => {
    expect(shownUrl('postgres://tray:s3cret@127.0.0.1:5432/tray')).to.equal(
      'postgres://tray:****@127.0.0.1:5432/tray',
    );
    expect(shownUrl('redis://127.0.0.1:6379')).to.equal('redis://127.0.0.1:6379');
  });

  it('shows no part of a password the URL parser refuses, whatever it holds', () => {
    for (const [url, shown] of [
      ['postgres://u:ab/cd@db/tray', 'postgres://****@db/tray'],
      ['redis://:ab/cd@127.0.0.1:6379', 'redis://****@127.0.0.1:6379'],
    ] as const) {
      expect(shownUrl(url), url).to.equal(shown);
    }
  });

  // node-postgres reads `password` from the query, ioredis merges the query into its options, and
  // MongoDB's options carry key passwords and session tokens.
  it('shows no query, which may carry a password or a token', () => {
    for (const [url, shown] of [
      ['postgres://tray@db.internal/tray?password=hunter2', 'postgres://tray@db.internal/tray?…'],
      ['redis://127.0.0.1:6379/?password=hunter2', 'redis://127.0.0.1:6379/?…'],
      [
        'mongodb://u:pw@h1:27017,h2:27017/tray?authMechanismProperties=AWS_SESSION_TOKEN:hunter2',
        'mongodb://****@h1:27017,h2:27017/tray?…',
      ],
      ['mongodb://127.0.0.1:27017/', 'mongodb://127.0.0.1:27017/'],
      ['postgres://u:ab?cd@db/tray?sslmode=require', 'postgres://****@db/tray?…'],
      ['postgres://tray@db/tray?password=hunter2&application_name=me@host', 'postgres://tray@db/tray?…'],
    ] as const) {
      expect(shownUrl(url), url).to.equal(shown);
    }
  });
});

// A seed pasted as a URL may hold the password, which belongs in REDIS_URL: the stack printed the
// variable as it was, before the services refused it without repeating it.
describe('shownClusterNodes (the cluster npm start prints)', () => {
  it('shows the seed nodes as host:port, and never an entry it cannot read', () => {
    expect(shownClusterNodes(' r1:7000, [::1]:7001')).to.equal('r1:7000,[::1]:7001');
    const shown = shownClusterNodes('r1:7000,redis://:Zq9secret@r2:7001');
    expect(shown).to.not.include('Zq9secret');
    expect(shown).to.include('REDIS_CLUSTER_NODES');
  });
});
