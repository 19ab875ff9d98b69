import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, startRedis } from '../../../scripts/lib/local-servers.ts';
import { DependencyError, waitForDependency } from '../../../shared/process/wait-for-dependency.ts';
import { createRedis, pingRedis } from '../../../shared/redis/create-redis.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

describe('waitForDependency', () => {
  it('gives up after its wait with an error naming the variable, warning once for one lasting failure', async () => {
    const port = await freePort();
    const { logger, messages } = recordingLogger();
    const connect = async () => {
      const client = new pg.Client({ connectionString: `postgres://tray:secret@127.0.0.1:${port}/tray` });
      try {
        await client.connect();
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    const waiting = waitForDependency({
      variable: 'DATABASE_URL',
      connect,
      logger,
      waitMs: 1_000,
      firstRetryMs: 50,
    });
    const error = await waiting.then(
      () => undefined,
      (failed: unknown) => failed,
    );
    expect(error).to.be.instanceOf(DependencyError);
    expect((error as DependencyError).message).to.match(
      /^DATABASE_URL did not answer within 1 s of start-up/,
    );
    expect(messages.filter((message) => message.includes('does not answer'))).to.have.lengthOf(1);
  });

  // A SIGSTOPped server still accepts TCP (the kernel's backlog) but answers nothing: an attempt
  // on it never settles, so each attempt must be bounded, not only the wait between them.
  // `localhost` where it names ::1 and 127.0.0.1: Node tries both, and when both refuse its error
  // is an AggregateError with an empty message (its shape, made here: this machine's localhost
  // has one address). The wait said only "AggregateError", dropping why.
  it('says why each address of a name refused, not only that an AggregateError came', async () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), { code: 'ECONNREFUSED' });
    const error = await waitForDependency({
      variable: 'DATABASE_URL',
      connect: () => Promise.reject(new AggregateError([refused('::1'), refused('127.0.0.1')])),
      logger: recordingLogger().logger,
      waitMs: 200,
      firstRetryMs: 50,
    }).then(
      () => undefined,
      (failed: unknown) => failed,
    );
    expect((error as DependencyError).message).to.match(
      /: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127\.0\.0\.1:5432$/,
    );
  });

  it('gives up on a dependency that accepts connections but never answers, warning once', async function () {
    this.timeout(20_000);
    const dir = mkdtempSync(join(tmpdir(), 'wait-hung-'));
    const redis = await startRedis({ dir });
    const client = createRedis(redis.url);
    client.on('error', () => undefined);
    try {
      redis.process.kill('SIGSTOP');
      const { logger, messages } = recordingLogger();
      const started = performance.now();
      const error = await waitForDependency({
        variable: 'REDIS_URL',
        connect: () => pingRedis(client),
        logger,
        waitMs: 1_500,
        firstRetryMs: 50,
        maxRetryMs: 400,
      }).then(
        () => undefined,
        (failed: unknown) => failed,
      );
      const elapsed = performance.now() - started;
      expect(error).to.be.instanceOf(DependencyError);
      expect((error as DependencyError).message).to.match(/^REDIS_URL did not answer within 2 s of start-up/);
      expect(elapsed).to.be.below(3_000);
      expect(messages.filter((message) => message.includes('does not answer'))).to.have.lengthOf(1);
    } finally {
      redis.process.kill('SIGCONT');
      client.disconnect();
      await redis.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
