import { expect } from 'chai';
import type { Db } from 'mongodb';
import { claimVersions } from '../../../../../tray-service/storage/mongodb/compare-and-set/claim-versions.ts';

/**
 * Claims a record's version for another writer, as a concurrent writer does before it writes
 * (claimVersions), and checks that the claim was won: the record is then held at that version until
 * the claim goes or its writer writes it.
 */
export async function claimFor(
  db: Db,
  owner: string,
  key: string,
  version: number,
  state = 'theirs',
): Promise<void> {
  const won = await claimVersions(db, [{ recordId: key, version, state }], { owner, takeoverMs: 60_000 });
  expect([...won]).to.deep.equal([key]);
}
