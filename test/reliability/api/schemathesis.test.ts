import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { useMongo, useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { aTrayRecord, insertRecords } from '../../support/tray-record-builder.ts';
import { reportFigures, tally } from '../support/report-figures.ts';
import {
  conformanceChecks,
  runSchemathesis,
  schemathesisBin,
  schemathesisExamples,
} from '../support/run-schemathesis.ts';
import { startTrayProcess, trayToken, type TrayProcess } from '../support/tray-process.ts';

const user = 'schemathesis-user';

describe('tray API against its own OpenAPI document (schemathesis)', function () {
  this.timeout(600_000);
  let tray: TrayProcess | undefined;
  // Registered before useMongo's hooks, so the tray process is gone before its database is dropped.
  after(() => tray?.kill());
  const mongo = useMongo();

  it(`answers no 5xx and matches the document in status, content type, headers and body (${schemathesisExamples} examples per operation)`, async () => {
    expect(
      existsSync(schemathesisBin),
      `${schemathesisBin} is missing: run npm run setup:schemathesis`,
    ).to.equal(true);
    const { db } = mongo;
    // Records to page through, so the history schemas are checked on real items, not empty lists.
    await insertRecords(
      db,
      Array.from({ length: 25 }, (_, n) =>
        aTrayRecord({
          userId: user,
          targetId: `st-${n}`,
          verb: n % 2 ? 'comment' : 'post',
          lastUpdate: Date.now() - n * 1000,
        }),
      ),
    );
    tray = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      mongoUri: testStack().mongoUri,
      db: mongo.dbName,
      prefix: useQueuePrefix(),
      // The fuzzer is one client sending thousands of calls: the per-user limit would answer 429.
      env: { RATE_LIMIT_CALLS: '1000000' },
    });
    const token = await trayToken(user);
    const result = await runSchemathesis({
      base: `http://127.0.0.1:${tray.port}`,
      token,
      checks: conformanceChecks,
      // The admin paths need an admin token: test/reliability/api/schemathesis-admin.test.ts.
      // The live stream never ends, so a fuzzer's call to it could only time out; its answers are
      // checked against the document in test/tray-service/live/create-stream-router.test.ts.
      extra: ['--exclude-path-regex', '^/admin/|^/notifications/v3/stream$'],
      timeoutMs: 540_000,
    });
    reportFigures('api schemathesis', {
      examplesPerOperation: schemathesisExamples,
      operations: result.operations,
      requests: result.requests.length,
      statuses: tally(result.requests.map((request) => request.status)),
      checks: result.checks,
      summary: result.summary,
    });
    expect(result.code, result.output).to.equal(0);
    expect(result.checks.length, result.output).to.equal(conformanceChecks.length);
    // Past the sign-in: a token the service refused would answer every call 401, which the
    // document allows, and leave the answers' own schemas unchecked.
    expect(result.operations, 'operations tested').to.be.greaterThan(0);
    for (const path of ['/notifications/v3', '/notifications/v3/history', '/notifications/v2/history']) {
      const answered = result.requests.filter(
        (request) => request.method === 'GET' && request.path === path && request.generation === 'positive',
      );
      expect(
        answered.some((request) => request.status === 200),
        `GET ${path}: no 200 among ${answered.length} valid requests`,
      ).to.equal(true);
    }
  });
});
