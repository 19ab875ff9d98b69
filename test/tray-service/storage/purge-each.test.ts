import { expect } from 'chai';
import { purgeEach } from '../../../tray-service/storage/purge-each.ts';

describe('purgeEach', () => {
  it('purges every table past one that fails, names the failed one, and counts the counted table', async () => {
    const ran: string[] = [];
    const step = (table: string, outcome: number | Error) => ({
      table,
      purge: async () => {
        ran.push(table);
        if (outcome instanceof Error) throw outcome;
        return outcome;
      },
    });
    const outcome = await purgeEach(
      [step('records', 7), step('actors', new Error('statement timeout')), step('claims', 2)],
      'records',
    );
    expect(ran).to.deep.equal(['records', 'actors', 'claims']);
    expect(outcome.purged).to.equal(7);
    expect(outcome.failures.map(({ table, error }) => [table, error.message])).to.deep.equal([
      ['actors', 'statement timeout'],
    ]);
  });

  // The tombstones' purge reads the kept actions' expiry as that step leaves it: run after it
  // failed, it deleted a tombstone its group still needed, and the action it voided, delivered
  // again, counted again.
  it('skips a step whose needed tables failed this run, naming them, and runs it when they passed', async () => {
    const ran: string[] = [];
    const step = (table: string, outcome: number | Error, needs?: string[]) => ({
      table,
      ...(needs ? { needs } : {}),
      purge: async () => {
        ran.push(table);
        if (outcome instanceof Error) throw outcome;
        return outcome;
      },
    });
    const failed = await purgeEach(
      [step('actions', new Error('statement timeout')), step('tombstones', 3, ['actions'])],
      'actions',
    );
    expect(ran).to.deep.equal(['actions']);
    expect(failed.failures.map(({ table, error }) => [table, error.message])).to.deep.equal([
      ['actions', 'statement timeout'],
      ['tombstones', 'not purged this time: it needs actions purged first, which failed'],
    ]);
    const passed = await purgeEach([step('actions', 1), step('tombstones', 3, ['actions'])], 'tombstones');
    expect(passed).to.deep.equal({ purged: 3, failures: [] });
  });

  it('reports a failure of the counted table with nothing counted, and wraps what is thrown that is no Error', async () => {
    const outcome = await purgeEach(
      [
        {
          table: 'records',
          purge: () => Promise.reject(new Error('connection lost')),
        },
        {
          table: 'claims',
          purge: () => Promise.reject('gone'),
        },
      ],
      'records',
    );
    expect(outcome.purged).to.equal(0);
    expect(outcome.failures.map(({ table, error }) => [table, error.message])).to.deep.equal([
      ['records', 'connection lost'],
      ['claims', 'gone'],
    ]);
  });
});
