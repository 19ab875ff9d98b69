import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { cleanEnv, runScript } from '../../support/run-script.ts';

const secrets = { WEBHOOK_SECRETS: 's1' };

describe('the Redis target (REDIS_URL or REDIS_CLUSTER_NODES)', () => {
  it('is REDIS_URL when no cluster is configured', () => {
    expect(loadReceiverConfig({ ...secrets, REDIS_URL: 'redis://10.0.0.9:6380' }).redis).to.equal(
      'redis://10.0.0.9:6380',
    );
  });

  it('is the cluster when REDIS_CLUSTER_NODES is set, for both services, and REDIS_URL is not used', () => {
    const env = { REDIS_CLUSTER_NODES: 'a:7000,b:7001', QUEUE_PREFIX: '{bull}', REDIS_URL: 'redis://x:1' };
    const expected = {
      clusterNodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
    };
    expect(loadReceiverConfig({ ...secrets, ...env }).redis).to.deep.equal(expected);
    expect(loadTrayConfig(env).redis).to.deep.equal(expected);
  });

  it("leaves the tray's storage variables to the tray: the receiver starts on an env file it shares", () => {
    const shared = { MONGODB_DB: 'tray.prod', MONGODB_URI: 'not a url' };
    expect(() => loadReceiverConfig({ ...secrets, ...shared })).not.to.throw();
    expect(() => loadTrayConfig(shared)).to.throw(ConfigError, /MONGODB_URI/);
  });

  it("takes only REDIS_URL's credentials on a cluster, decoded, for every node", () => {
    const env = { REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: '{bull}' };
    expect(loadTrayConfig({ ...env, REDIS_URL: 'redis://:p%40ss@ignored:1' }).redis).to.deep.equal({
      clusterNodes: [{ host: 'a', port: 7000 }],
      auth: { password: 'p@ss' },
    });
    expect(
      loadReceiverConfig({ ...secrets, ...env, REDIS_URL: 'redis://svc:s3cret@ignored:1' }).redis,
    ).to.deep.equal({
      clusterNodes: [{ host: 'a', port: 7000 }],
      auth: { username: 'svc', password: 's3cret' },
    });
    expect(loadTrayConfig({ ...env, REDIS_URL: 'redis://svc@ignored:1' }).redis).to.deep.equal({
      clusterNodes: [{ host: 'a', port: 7000 }],
    });
  });

  // A cluster has database 0 only: the /2 meant to keep two deployments apart was dropped unsaid.
  it('refuses a database index in REDIS_URL on a cluster, naming REDIS_URL', () => {
    const env = { REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: '{bull}' };
    for (const index of ['/2', '?db=3', '/0?db=1'])
      expect(() => loadTrayConfig({ ...env, REDIS_URL: `redis://:pw@ignored:1${index}` }), index).to.throw(
        ConfigError,
        'REDIS_URL: names a database index, which a Redis Cluster (REDIS_CLUSTER_NODES) does not have',
      );
    for (const index of ['', '/', '/0', '?db=0'])
      expect(
        loadReceiverConfig({ ...secrets, ...env, REDIS_URL: `redis://:pw@ignored:1${index}` }).redis,
        index,
      ).to.deep.equal({ clusterNodes: [{ host: 'a', port: 7000 }], auth: { password: 'pw' } });
  });

  // new URL() takes a password with a lone "%"; decoding it threw a URIError, a stack trace
  // naming no variable.
  it('names REDIS_URL, not its password, when the password holds a "%" that starts no escape', () => {
    const env = {
      REDIS_CLUSTER_NODES: 'a:7000',
      QUEUE_PREFIX: '{bull}',
      REDIS_URL: 'redis://:50%off@ignored:1',
    };
    expect(() => loadTrayConfig(env))
      .to.throw(
        ConfigError,
        'REDIS_URL: its user name or password holds a "%" that starts no escape: write each "%" in it as %25',
      )
      .with.property('message')
      .that.does.not.include('50%off');
  });

  // ioredis decodes a single server's password at connect time: a lone "%" threw an uncaught
  // URIError there, and a database path that is no number was taken as database 0.
  it('checks a single server\'s REDIS_URL too: a lone "%" in its password, a database path that is no index', () => {
    expect(() => loadTrayConfig({ REDIS_URL: 'redis://:50%off@127.0.0.1:6379' }))
      .to.throw(ConfigError, 'REDIS_URL: its user name or password holds a "%" that starts no escape')
      .with.property('message')
      .that.does.not.include('50%off');
    expect(() => loadReceiverConfig({ ...secrets, REDIS_URL: 'redis://svc%zz:pw@127.0.0.1:6379' })).to.throw(
      ConfigError,
      'REDIS_URL: its user name or password holds a "%"',
    );
    for (const path of ['/abc', '/1x', '/-1', '/0/1', '?db=abc', '/?db=', '/1?db=x'])
      expect(() => loadTrayConfig({ REDIS_URL: `redis://127.0.0.1:6379${path}` }), path).to.throw(
        ConfigError,
        /REDIS_URL: its (path|db option) \("[^"]*"\) names no database index/,
      );
    // A password with a "/" not written as %2F ends the host early: the rest of it, with the host,
    // is read as the path, which the message must not print.
    for (const url of [
      'redis://default:7/Zq9secret@redis:6379/0',
      'redis://u:77?db=Zq9secret@redis:6379',
      'redis://default:123/Zq9secret?def@redis:6379/0',
      // Read as host "default", port 2024, and a query or fragment that names no db.
      'redis://default:2024?Zq9secret@redis:6379',
      'redis://default:2024#Zq9secret@redis:6379',
      // No URL at all before the escape.
      'redis://default:Ab/Zq9secret@redis:6379',
    ])
      expect(() => loadTrayConfig({ REDIS_URL: url }), url)
        .to.throw(ConfigError, /REDIS_URL: .*write "\/" as %2F/)
        .with.property('message')
        .that.does.not.include('Zq9secret');
    for (const path of ['', '/', '/0', '/15', '?db=2', '/?family=6', '/3?db=3'])
      expect(loadTrayConfig({ REDIS_URL: `redis://:p%25@127.0.0.1:6379${path}` }).redis).to.equal(
        `redis://:p%25@127.0.0.1:6379${path}`,
      );
  });

  // The URL parser reads a scheme in any case, ioredis turns TLS on only for a lower-case
  // "rediss://": REDISS:// passed as TLS and connected in plain text, the password sent in clear.
  it('hands ioredis the scheme in lower case, so REDISS:// is TLS too', () => {
    expect(loadTrayConfig({ REDIS_URL: 'REDISS://:pw@redis.example:6380/1' }).redis).to.equal(
      'rediss://:pw@redis.example:6380/1',
    );
    expect(loadTrayConfig({ REDIS_URL: 'Redis://127.0.0.1:6379' }).redis).to.equal('redis://127.0.0.1:6379');
  });

  it('reaches every node of a cluster over TLS when REDIS_URL is rediss://, with its credentials', () => {
    const env = { REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: '{bull}' };
    expect(loadTrayConfig({ ...env, REDIS_URL: 'rediss://:pw@ignored:6380' }).redis).to.deep.equal({
      clusterNodes: [{ host: 'a', port: 7000 }],
      tls: {},
      auth: { password: 'pw' },
    });
    expect(loadReceiverConfig({ ...secrets, ...env, REDIS_URL: 'rediss://ignored' }).redis).to.deep.equal({
      clusterNodes: [{ host: 'a', port: 7000 }],
      tls: {},
    });
  });

  for (const prefix of ['bull', '{}bull', 'bull{', 'bull{}']) {
    it(`refuses QUEUE_PREFIX=${prefix} on a cluster, naming the variable and a tagged example`, () => {
      expect(() => loadTrayConfig({ REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: prefix }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(
          /^Invalid configuration: QUEUE_PREFIX: .* has no hash tag, .*REDIS_CLUSTER_NODES.*"\{bull\}"/,
        );
    });
  }

  it('accepts a tagged prefix with text around the tag', () => {
    const config = loadTrayConfig({ REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: 'prod-{webhooks}' });
    expect(config.QUEUE_PREFIX).to.equal('prod-{webhooks}');
  });

  it('names REDIS_CLUSTER_NODES when a seed is malformed', () => {
    expect(() => loadTrayConfig({ REDIS_CLUSTER_NODES: 'a:7000,b', QUEUE_PREFIX: '{bull}' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('REDIS_CLUSTER_NODES: entry 2 is not host:port');
  });
  for (const script of ['receiver/main.ts', 'tray-service/main.ts']) {
    it(`${script} refuses to start on a cluster with an untagged QUEUE_PREFIX, in one line naming it`, async () => {
      const result = await runScript(
        script,
        [],
        cleanEnv({ WEBHOOK_SECRETS: 's1', REDIS_CLUSTER_NODES: '127.0.0.1:7000', QUEUE_PREFIX: 'bull' }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
      expect(result.stderr).to.include('QUEUE_PREFIX: "bull" has no hash tag');
    });
  }
});

describe('numbers in the environment', () => {
  for (const [name, value] of [
    ['RECEIVER_PORT', '0x1f90'],
    ['RECEIVER_PORT', '8e3'],
    ['METRICS_PORT', '9.1e3'],
    ['RECEIVER_KEEPALIVE_TIMEOUT_MS', '5e3'],
    ['RECEIVER_KEEPALIVE_TIMEOUT_MS', '5000.0'],
  ] as const) {
    it(`refuses ${name}=${value}: only decimal digits say a whole number`, () => {
      expect(() => loadReceiverConfig({ ...secrets, [name]: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(new RegExp(`${name}: expected`));
    });
  }

  for (const value of ['0x10', '1e1', '+10', '10.0']) {
    it(`refuses TRAY_PAGE_SIZE=${value}, naming the variable`, () => {
      expect(() => loadTrayConfig({ TRAY_PAGE_SIZE: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(/TRAY_PAGE_SIZE: expected a whole number from 1 to 100/);
    });
  }

  it('still takes digits, with the spaces an env file may leave around them', () => {
    const config = loadReceiverConfig({
      ...secrets,
      RECEIVER_PORT: ' 8181 ',
      RECEIVER_KEEPALIVE_TIMEOUT_MS: '65000',
    });
    expect(config.RECEIVER_PORT).to.equal(8181);
    expect(config.RECEIVER_KEEPALIVE_TIMEOUT_MS).to.equal(65_000);
    expect(loadTrayConfig({ TRAY_PAGE_SIZE: '25' }).TRAY_PAGE_SIZE).to.equal(25);
  });
});

describe('SHUTDOWN_DEADLINE_MS', () => {
  it('is 8 s unless set, for both services, and takes a longer grace period', () => {
    expect(loadReceiverConfig(secrets).SHUTDOWN_DEADLINE_MS).to.equal(8_000);
    expect(loadTrayConfig({}).SHUTDOWN_DEADLINE_MS).to.equal(8_000);
    expect(loadTrayConfig({ SHUTDOWN_DEADLINE_MS: '25000' }).SHUTDOWN_DEADLINE_MS).to.equal(25_000);
    expect(loadReceiverConfig({ ...secrets, SHUTDOWN_DEADLINE_MS: '25000' }).SHUTDOWN_DEADLINE_MS).to.equal(
      25_000,
    );
  });

  // Below 5 s the HTTP drain's grace (4 s) would not fit inside it.
  for (const value of ['4999', '0', '8s', '600001'])
    it(`refuses ${value}, naming the variable`, () => {
      expect(() => loadTrayConfig({ SHUTDOWN_DEADLINE_MS: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('SHUTDOWN_DEADLINE_MS: expected a whole number of milliseconds from 5000 to 600000');
    });
});
