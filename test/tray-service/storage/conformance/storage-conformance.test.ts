import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { StorageEngine, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { conformanceAdapters, REQUIRED_ENGINES, type OpenedStorage } from './conformance-adapters.ts';
import { registeredCases, type ConformanceContext } from './conformance-case.ts';
// Every case file, so each registers its cases before the adapters' suites are built.
import './records-cases.ts';
import './change-times-cases.ts';
import './writes-cases.ts';
import './memberships-cases.ts';
import './id-order-cases.ts';
import './latest-times-cases.ts';
import './block-list-cases.ts';
import './bans-cases.ts';
import './events-cases.ts';
import './events-console-cases.ts';
import './event-rollups-cases.ts';
import './community-members-cases.ts';
import './decisions-cases.ts';
import './purge-cases.ts';
import './concurrency-cases.ts';
import './model-property-cases.ts';
import './leave-and-rejoin-cases.ts';
import './membership-property-cases.ts';
import './inbox-cases.ts';
import './inbox-property-cases.ts';
import './removals-cases.ts';
import './removal-race-cases.ts';
import './removal-outcomes-cases.ts';
import './mutes-cases.ts';
import './back-dated-mutes-cases.ts';
import './event-recipients-cases.ts';
import './id-limits-cases.ts';
import './deleted-users-cases.ts';
import './kept-actions-cases.ts';

/**
 * The storage conformance run: every registered case (conformance-case.ts) against every adapter
 * (conformance-adapters.ts), then a check that each case ran on every engine the port has.
 */
const ran = new Map<string, Set<StorageEngine>>();

for (const adapter of conformanceAdapters) {
  describe(`storage conformance: ${adapter.engine}`, function () {
    let shared: OpenedStorage | undefined;
    const isolated: OpenedStorage[] = [];
    /** A fresh database of the case's own, dropped after it. */
    const openIsolated = async () => {
      const fresh = await adapter.open();
      isolated.push(fresh);
      return fresh;
    };

    before(async function () {
      this.timeout(120_000);
      shared = await adapter.open();
    });
    afterEach(async function () {
      this.timeout(60_000);
      for (const opened of isolated.splice(0)) await opened.drop();
    });
    after(async function () {
      this.timeout(60_000);
      await shared?.drop();
    });

    // A case needing what the adapter does not have yet is not registered for it (listed below).
    for (const testCase of registeredCases().filter((one) => !one.needs || adapter.capabilities[one.needs])) {
      it(testCase.name, async function () {
        if (testCase.timeout) this.timeout(testCase.timeout);
        ran.set(testCase.name, (ran.get(testCase.name) ?? new Set()).add(adapter.engine));
        if (!shared) throw new Error('the adapter did not open');
        const opened = testCase.ownDatabase ? await openIsolated() : shared;
        const storage: TrayStorage = opened.storage;
        const tag = randomUUID().slice(0, 6);
        const context: ConformanceContext = {
          storage,
          id: (name) => `${name}_${tag}`,
          peer: () => opened.peer(),
          isolated: async () => (await openIsolated()).storage,
          write: (now, extra = {}) => ({
            now,
            retentionDays: RETENTION_DAYS,
            ...extra,
          }),
        };
        await testCase.run(context);
      });
    }
  });
}

describe('storage conformance: coverage', () => {
  it('has one adapter for every engine of the port', () => {
    expect(conformanceAdapters.map((adapter) => adapter.engine).sort()).to.deep.equal(
      [...REQUIRED_ENGINES].sort(),
    );
  });

  /** Each case an engine does not run because its adapter lacks what the case needs. */
  const pending = registeredCases().flatMap((testCase) =>
    conformanceAdapters
      .filter((adapter) => testCase.needs && !adapter.capabilities[testCase.needs])
      .map((adapter) => `${testCase.name} (${adapter.engine})`),
  );

  it('ran every registered case on every engine but the pending ones (none skipped, none for one engine only)', () => {
    const missing = registeredCases().flatMap((testCase) =>
      REQUIRED_ENGINES.filter((engine) => !ran.get(testCase.name)?.has(engine)).map(
        (engine) => `${testCase.name} (${engine})`,
      ),
    );
    expect(missing).to.deep.equal(pending);
  });

  it('holds back no case: every adapter has every capability a case needs', () => {
    expect(pending).to.deep.equal([]);
    expect(
      registeredCases().filter(
        (testCase) => testCase.needs && testCase.needs !== 'inbox' && testCase.needs !== 'removals',
      ),
    ).to.deep.equal([]);
  });

  it('has no case that asks which engine it runs on', () => {
    const folder = new URL('.', import.meta.url);
    const branching = readdirSync(folder)
      .filter((file) => file.endsWith('-cases.ts'))
      .filter((file) => /\.engine\b/.test(readFileSync(new URL(file, folder), 'utf8')));
    expect(branching).to.deep.equal([]);
  });

  it('loads every case file of the suite', () => {
    const runner = readFileSync(new URL(import.meta.url), 'utf8');
    const caseFiles = readdirSync(new URL('.', import.meta.url)).filter((file) => file.endsWith('-cases.ts'));
    expect(caseFiles.filter((file) => !runner.includes(`import './${file}';`))).to.deep.equal([]);
  });
});
