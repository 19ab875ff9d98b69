import { expect } from 'chai';
import pg from 'pg';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { DependencyError, waitForDependency } from '../../../shared/process/wait-for-dependency.ts';
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
});
