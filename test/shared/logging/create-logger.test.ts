import { expect } from 'chai';
import { Writable } from 'node:stream';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { toAppError } from '../../../shared/http/error-middleware.ts';
import { testStack } from '../../support/test-stack.ts';

const password = 'canary-s3cret-0d5e';

/**
 * Redis refusing an AUTH, as ioredis reports it: a ReplyError carrying the command, its arguments
 * (the password) included. The test server has no password, so it refuses any.
 */
async function refusedAuth(): Promise<Error & { command?: { name: string; args: unknown[] } }> {
  const redis = new Redis(testStack().redisUrl, { lazyConnect: true });
  try {
    await redis.connect();
    await redis.auth(password);
  } catch (error) {
    return error as Error;
  } finally {
    redis.disconnect();
  }
  throw new Error('Redis accepted the AUTH');
}

/** The project's logger, writing into an array instead of stdout. */
function loggedLines() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ name: 'test', level: 'info', destination: sink }), lines };
}

describe('createLogger', () => {
  let error: Awaited<ReturnType<typeof refusedAuth>>;
  before(async () => {
    error = await refusedAuth();
    // What the test is about: ioredis puts the password on the error.
    expect(error.command).to.deep.equal({ name: 'auth', args: [password] });
  });

  it("never writes a Redis command's arguments of an error logged as err, and keeps its name", () => {
    const { logger, lines } = loggedLines();
    logger.fatal({ err: error }, `unhandled rejection: ${error.message}; exiting`);
    logger.error(error, 'logged as the first argument');
    expect(lines).to.have.length(2);
    for (const line of lines) {
      expect(line).not.to.include(password);
      const { err } = JSON.parse(line) as { err: { type: string; message: string; command: unknown } };
      expect(err.type).to.equal('ReplyError');
      expect(err.command).to.deep.equal({ name: 'auth' });
    }
    // The error itself is left as it was: its owner (ioredis, a caller) may still read it.
    expect(error.command?.args).to.deep.equal([password]);
  });

  it('nor of such an error nested in another: a 5xx wrapping it, an aggregate, a property', () => {
    const { logger, lines } = loggedLines();
    const appError = toAppError(error);
    logger.error({ err: appError }, 'the wrapper');
    logger.error({ err: appError.cause }, 'what error-middleware logs');
    logger.error({ err: new AggregateError([error], 'several') }, 'an aggregate');
    logger.error({ err: Object.assign(new Error('outer'), { inner: error }) }, 'a property');
    const detail = { command: { name: 'auth', args: [password] } };
    logger.error({ err: Object.assign(new Error('outer'), { detail }) }, 'a plain object');
    logger.error({ err: new Error('caused', { cause: error }) }, 'a cause');
    expect(lines).to.have.length(6);
    for (const line of lines) expect(line).not.to.include(password);
  });

  it('redacts command arguments logged outside an error too (a backstop)', () => {
    const { logger, lines } = loggedLines();
    logger.warn({ command: { name: 'auth', args: [password] } }, 'top level');
    logger.warn({ failure: { command: { name: 'auth', args: [password] } } }, 'one level down');
    expect(lines).to.have.length(2);
    for (const line of lines) expect(line).not.to.include(password);
  });
});

describe('createLogger: the configuration', () => {
  // Nothing logs the config object today; were it logged, no secret of it may be written.
  it('never writes a secret variable of the configuration', () => {
    const { logger, lines } = loggedLines();
    const secrets = [
      'WEBHOOK_SECRETS',
      'JWT_SECRET',
      'ADMIN_TOKEN',
      'ADMIN_JWT_SECRET',
      'METRICS_TOKEN',
      'MODERATION_WEBHOOK_SECRET',
      'REDIS_URL',
      'MONGODB_URI',
      'DATABASE_URL',
    ];
    logger.info(
      { config: Object.fromEntries(secrets.map((name) => [name, `${password}-${name}`])) },
      'config',
    );
    expect(lines.join('')).not.to.include(password);
    expect(JSON.parse(lines[0] ?? '{}').config).to.have.all.keys(...secrets);
  });

  it('never writes the Redis target derived from REDIS_URL, for a server or a cluster', () => {
    const { logger, lines } = loggedLines();
    logger.info({ config: { redis: `redis://:${password}@db.internal:6379/0` } }, 'server');
    logger.info({ config: { redis: { clusterNodes: [], auth: { username: 'tray', password } } } }, 'cluster');
    expect(lines).to.have.lengthOf(2);
    expect(lines.join('')).not.to.include(password);
  });

  it('never writes a credential header or a stream ticket of a logged request or response', () => {
    const { logger, lines } = loggedLines();
    const headers = {
      authorization: `Bearer ${password}`,
      cookie: `tray_admin_session=${password}`,
      'x-service-signature': password,
      'webhook-signature': `v1,${password}`,
    };
    logger.info({ req: { headers, query: { ticket: password } } }, 'request');
    logger.info({ headers, query: { ticket: password } }, 'headers');
    logger.info({ res: { headers: { 'set-cookie': `tray_admin_session=${password}` } } }, 'response');
    expect(lines).to.have.lengthOf(3);
    expect(lines.join('')).not.to.include(password);
  });

  it('never writes the credentials of a URL an error quotes, in its message or its stack', () => {
    const { logger, lines } = loggedLines();
    const quoting = new Error(`connect ECONNREFUSED for postgres://tray:${password}@db.internal:5432/tray`);
    logger.error({ err: quoting }, 'failed');
    logger.error({ err: new Error('wrapped', { cause: quoting }) }, 'failed again');
    expect(lines.join('')).not.to.include(password);
    expect(JSON.parse(lines[0] ?? '{}').err.message).to.equal(
      'connect ECONNREFUSED for postgres://***@db.internal:5432/tray',
    );
  });

  // Only an error's message and stack were cleaned: a message logged as a string under `err`
  // (`err: error.message`, as most warnings do), a URL an error holds in a property of its own,
  // and the line's msg pino takes from the error when none is given went out as they were.
  it('nor in a string logged as err, in any property of an error, or in the msg taken from it', () => {
    const { logger, lines } = loggedLines();
    const url = `redis://tray:${password}@cache.internal:6379`;
    logger.warn({ err: `connect failed ${url}` }, 'as a string');
    logger.warn({ err: Object.assign(new Error('boom'), { url, hosts: [url] }) }, 'in a property');
    logger.error({ err: new Error(`connect failed ${url}`) });
    expect(lines).to.have.length(3);
    expect(lines.join('')).not.to.include(password);
    expect(JSON.parse(lines[0] ?? '{}').err).to.equal('connect failed redis://***@cache.internal:6379');
    expect(JSON.parse(lines[2] ?? '{}').msg).to.equal('connect failed redis://***@cache.internal:6379');
  });
});

// A service that logs a fatal line and exits (a port it cannot bind, a shutdown that ended): the
// default stream wrote each line on a thread of its own and flushed the rest at exit beside it, so
// the last lines came out of order or not at all (a shutdown's "stopped" before its own steps).
describe("createLogger's default stream: stdout, each line written before the next", () => {
  it('keeps every line, in order, up to a process.exit right after them', async () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(new URL('../../../shared/logging/create-logger.ts', import.meta.url).pathname)};`,
      "import { pbkdf2 } from 'node:crypto';",
      "const logger = createLogger({ name: 'order', level: 'info' });",
      // libuv's one thread busy (here hashing; DNS, file and crypto work at a shutdown alike): a
      // write handed to it waits, and the exit came first.
      "pbkdf2('p', 's', 2_000_000, 64, 'sha512', () => undefined);",
      "for (let i = 0; i < 2000; i += 1) logger.info({ i }, 'line');",
      'process.exit(0);',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await once(child.stdout, 'end');
    const order = stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { i: number }).i);
    expect(order).to.deep.equal(Array.from({ length: 2000 }, (_, i) => i));
  });
});
