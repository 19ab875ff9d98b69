import { expect } from 'chai';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { purgeExpiredRecords } from '../../../../tray-service/storage/postgres/purge-expired-records.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf, recordingPool } from './plan-of.ts';

describe('storage/postgres purgeExpiredRecords', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  // Without an index a batch of 1,000 scans and sorts the whole table: on tray_records about
  // 58 ms at 400,000 records and 272 ms at 2 million, past the statement timeout at ~70 million.
  it("reads each table's expired rows from its expiry index, oldest first: no sequential scan, no sort", async () => {
    const recording = recordingPool(pg.pool);
    await purgeExpiredRecords(recording.pool, new Date());
    const tableOf = (text: string) => /^DELETE FROM (\w+)/.exec(text)?.[1] ?? text;
    expect(recording.statements.map((statement) => tableOf(statement.text))).to.deep.equal([
      'tray_records',
      'tray_target_actors',
      'tray_community_posts',
      'tray_personal_actions',
      'tray_group_actions',
      'tray_removals',
      'tray_removal_outcomes',
      'tray_removal_changes',
      'tray_mutes',
    ]);
    for (const statement of recording.statements) {
      const table = tableOf(statement.text);
      const plan = await planOf(pg.pool, statement);
      // An index scan, not an index-only one: the batch locks each row it reads (SKIP LOCKED).
      expect(plan.indexScans, `${table}: ${plan.nodes.join(' > ')}`).to.deep.include({
        node: 'Index Scan',
        index: `${table}_expiry`,
      });
      expect(plan.nodes, table).not.to.include('Seq Scan');
      expect(plan.nodes, table).not.to.include('Sort');
    }
  });
});
