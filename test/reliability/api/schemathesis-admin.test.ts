import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { exampleEventKey } from '../../../tray-service/admin/api-schema/admin-inputs.ts';
import { toDecisionDoc, type ModerationDecisionDoc } from '../../../tray-service/domain/decision-doc.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { eventDoc, storeEvents, type SeedEvent } from '../../tray-service/admin/admin-fixtures.ts';
import { reportFigures, tally } from '../support/report-figures.ts';
import { createRequestChecker, type OpenApiPaths } from '../support/request-violations.ts';
import {
  conformanceChecks,
  runSchemathesis,
  schemathesisBin,
  schemathesisExamples,
} from '../support/run-schemathesis.ts';
import { startTrayProcess, type TrayProcess } from '../support/tray-process.ts';

const adminToken = 'schemathesis-admin-token-0123456789abcdef';
const adminOperations = [
  '/admin/events',
  '/admin/events/export',
  '/admin/events/export/check',
  '/admin/events/{key}',
  '/admin/moderation/decisions',
];

/**
 * Stored events the fuzzer can find: the document's examples (event post.didCreate, webhook main,
 * the example key) match some of them, so list, filter and by-key calls return real documents.
 */
function storedEvents(): SeedEvent[] {
  const statuses = ['applied', 'stored', 'unknown', 'invalid'] as const;
  const now = Date.now();
  return Array.from({ length: 40 }, (_, n) => {
    const status = statuses[n % 4]!;
    return eventDoc({
      ...(n === 0 ? { key: exampleEventKey } : {}),
      event: n % 3 ? 'post.didCreate' : 'comment.didCreate',
      webhook: n % 5 ? 'main' : 'backup',
      status,
      ...(status === 'unknown' || status === 'invalid' ? { error: `${status} event` } : {}),
      receivedAt: new Date(now - n * 60_000),
    });
  });
}

function decisions(events: readonly SeedEvent[]): ModerationDecisionDoc[] {
  return events.slice(0, 12).map((event, n) => ({
    ...toDecisionDoc(
      event,
      n % 2 ? 'blocked-words' : 'repeat-offender',
      {
        action: n % 3 ? 'flag' : 'ban-request',
        reason: 'blocklisted words: "spam"',
        subject: { type: 'post', id: `p-${n}` },
        ...(n % 4 ? { userId: 'u-1234' } : {}),
      },
      { now: new Date(event.receivedAt.getTime() + 1000), delivery: n % 2 ? 'off' : 'pending' },
    ),
    ...(n % 4 === 2 ? { delivery: 'delivered' as const, deliveryAttempts: 1, deliveredAt: new Date() } : {}),
    ...(n % 4 === 0 ? { delivery: 'failed' as const, deliveryAttempts: 10, lastError: 'HTTP 502' } : {}),
  }));
}

describe('admin API against its OpenAPI document (schemathesis)', function () {
  this.timeout(600_000);
  let tray: TrayProcess | undefined;
  // Registered before useTrayStorage's hooks, so the tray process is gone before its database is dropped.
  after(() => tray?.kill());
  const suite = useTrayStorage();

  it(`answers no 5xx, matches the document, rejects invalid input with 4xx and refuses calls without the token (${schemathesisExamples} examples per operation)`, async () => {
    expect(
      existsSync(schemathesisBin),
      `${schemathesisBin} is missing: run npm run setup:schemathesis`,
    ).to.equal(true);
    const events = storedEvents();
    await storeEvents(suite.storage, events);
    await suite.storage.decisions.saveAll(decisions(events));
    tray = await startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix: useQueuePrefix(),
      env: {
        ...suite.env,
        ADMIN_TOKEN: adminToken,
        ADMIN_LIST_MAX_LIMIT: '50',
        ADMIN_LIST_DEFAULT_LIMIT: '20',
      },
    });
    // Not negative_data_rejection: schemathesis 3.x judges the data it generated, not the request it
    // sent, and reports valid requests as accepted negative data (see request-violations.ts). The
    // same rule is checked below on the requests as sent.
    const checks = [...conformanceChecks, 'ignored_auth'];
    // The admin API and its OpenAPI document are on the admin listener (ADMIN_PORT).
    const base = `http://127.0.0.1:${tray.adminPort}`;
    const result = await runSchemathesis({
      name: 'admin',
      base,
      token: adminToken,
      checks,
      // Valid and invalid data; then the document's links (a page's first item -> GET by key). The
      // live tail is a stream that stays open: a fuzzer's request would wait for it to end.
      extra: [
        '--include-path-regex',
        '^/admin/',
        '--exclude-path-regex',
        '^/admin/events/tail$',
        '--data-generation-method',
        'all',
        '--stateful',
        'links',
      ],
      timeoutMs: 540_000,
    });
    const served = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiPaths;
    const check = createRequestChecker(served);
    const judged = result.requests.map((request) => ({
      ...request,
      ...check(request.method, request.path, request.search),
    }));
    const byOperation: Record<string, Record<string, number>> = {};
    for (const request of judged) {
      const operation = `${request.method} ${request.operation} ${request.generation}`;
      const statuses = (byOperation[operation] ??= {});
      statuses[request.status] = (statuses[request.status] ?? 0) + 1;
    }
    const invalid = judged.filter((request) => request.violation !== undefined);
    const negative = judged.filter((request) => request.generation === 'negative');
    reportFigures('api schemathesis admin', {
      examplesPerOperation: schemathesisExamples,
      operations: result.operations,
      requests: result.requests.length,
      statuses: tally(result.requests.map((request) => request.status)),
      byOperation,
      invalidAsSent: { requests: invalid.length, statuses: tally(invalid.map((request) => request.status)) },
      negativeValidAsSent: negative.filter((request) => request.violation === undefined).length,
      checks: result.checks,
      summary: result.summary,
    });
    expect(result.code, result.output).to.equal(0);
    expect(
      result.checks.map((item) => item.check),
      result.output,
    ).to.have.members(checks);
    // Every request that breaks the document, as sent, was refused with a 4xx.
    const accepted = invalid.filter((request) => request.status < 400 || request.status >= 500);
    expect(accepted.map((r) => `${r.status} ${r.method} ${r.path}${r.search}: ${r.violation}`)).to.deep.equal(
      [],
    );
    expect(invalid.length).to.be.greaterThan(0);
    // Real documents came back from every operation, not only errors.
    for (const operation of adminOperations) {
      expect(byOperation[`GET ${operation} positive`]?.['200'], `${operation}: no 200`).to.be.greaterThan(0);
    }
  });
});
