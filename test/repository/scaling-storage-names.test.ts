import { expect } from 'chai';
import * as collectionNames from '../../tray-service/storage/mongodb/collections/collection-names.ts';
import { trayCollections } from '../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { backticked, proseLines, section, tableRows, type NumberedLine } from '../support/markdown.ts';
import { readRepositoryFile } from '../support/repository-files.ts';
import {
  distributedBy,
  localTables,
  referenceTables,
} from '../tray-service/storage/postgres/distribution-columns.ts';

/**
 * docs/scaling.md places every table and collection of the tray's storage: each PostgreSQL table
 * in the Citus table with the column distribution-columns.ts gives it (the schema test holds the
 * migrated schema to that), and each MongoDB collection in the shard-key table, by a field one of
 * its indexes leads with (a shard key needs such an index) or by `_id`.
 */

const page = 'docs/scaling.md';
const lines = proseLines(readRepositoryFile(page));

/** Each table row's backticked names (first cell) with the row's second cell. */
function placements(sectionLines: readonly NumberedLine[]) {
  return tableRows(sectionLines).flatMap(({ cells, number }) =>
    backticked(cells[0] ?? '').map((name) => ({ name, placement: cells[1] ?? '', number })),
  );
}

describe(`${page}: every table and collection of the tray's storage is placed`, () => {
  describe('PostgreSQL: the Citus table', () => {
    const postgres = section(lines, 'Tray storage on PostgreSQL');
    const rows = placements(postgres);

    it('reads the table', () => {
      expect(rows.length, 'tables found').to.be.greaterThan(5);
    });

    it('lists every distributed table with its distribution column', () => {
      const wrong: string[] = [];
      for (const [table, column] of Object.entries(distributedBy)) {
        const row = rows.find((entry) => entry.name === table);
        if (!row) wrong.push(`${page}: ${table} (distributed by ${column}) is not in the Citus table`);
        else if (backticked(row.placement)[0] !== column)
          wrong.push(
            `${page}:${row.number}: ${table} is listed by ${row.placement}, but is distributed by \`${column}\``,
          );
      }
      expect(wrong).to.deep.equal([]);
    });

    it('lists no table the schema does not distribute, and names its reference and local tables', () => {
      const wrong = rows
        .filter(({ name }) => distributedBy[name] === undefined)
        .map(
          ({ name, number }) =>
            `${page}:${number}: ${name} is not a distributed table (distribution-columns.ts)`,
        );
      const text = postgres.map(({ line }) => line).join('\n');
      for (const table of [...referenceTables, ...localTables])
        if (!text.includes(`\`${table}\``))
          wrong.push(`${page}: ${table} is not named under "Tray storage on PostgreSQL"`);
      expect(wrong).to.deep.equal([]);
    });
  });

  describe('MongoDB: the shard-key table', () => {
    const rows = placements(section(lines, 'Tray storage on MongoDB'));
    const collections: string[] = Object.values(collectionNames);
    const specs = new Map(trayCollections.map((spec) => [spec.name, spec]));

    it('reads the table', () => {
      expect(rows.length, 'collections found').to.be.greaterThan(5);
    });

    it('lists every collection once, and nothing else', () => {
      const wrong: string[] = [];
      for (const collection of collections)
        if (!rows.some((row) => row.name === collection))
          wrong.push(`${page}: ${collection} is not in the shard-key table`);
      const seen = new Set<string>();
      for (const { name, number } of rows) {
        if (!collections.includes(name))
          wrong.push(
            `${page}:${number}: ${name} is not a collection (tray-service/storage/mongodb/collections/collection-names.ts)`,
          );
        if (seen.has(name)) wrong.push(`${page}:${number}: ${name} is listed twice`);
        seen.add(name);
      }
      expect(wrong).to.deep.equal([]);
    });

    it('shards each collection by `_id` or by a field one of its indexes leads with', () => {
      const wrong: string[] = [];
      for (const { name, placement, number } of rows) {
        const key = backticked(placement)[0];
        if (key === undefined) {
          if (!/^not sharded\b/.test(placement))
            wrong.push(
              `${page}:${number}: ${name}: "${placement}" names no shard key (or says "not sharded")`,
            );
          continue;
        }
        const spec = specs.get(name);
        if (!spec) {
          wrong.push(`${page}:${number}: ${name} is not declared in tray-collections.ts`);
          continue;
        }
        const leading = spec.indexes.map((index) => Object.keys(index.key)[0]);
        if (key !== '_id' && !leading.includes(key))
          wrong.push(
            `${page}:${number}: ${name} is sharded by \`${key}\`, but no index of it leads with that field (${leading.join(', ') || 'it has none besides _id'})`,
          );
      }
      expect(wrong).to.deep.equal([]);
    });
  });
});
