import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeFolder } from '../../../receiver/spool/segment-files.ts';
import { countDiskCalls } from '../support/disk-calls.ts';

describe('makeFolder (the spool’s folders)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spool-folder-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // A folder whose entry in its parent was never synced may vanish in a power loss, with every
  // fsynced segment in it: SPOOL_DIR itself was made without that sync.
  it('makes the missing folders private and syncs each one’s entry into its parent', async () => {
    const syncs = await countDiskCalls(dir, 'sync');
    try {
      await makeFolder(join(dir, 'a', 'b', 'spool'));
      // dir (holds a), a (holds b), b (holds spool).
      expect(syncs.count()).to.equal(3);
      for (const made of ['a', 'a/b', 'a/b/spool'])
        expect(statSync(join(dir, made)).mode & 0o777, made).to.equal(0o700);
      await makeFolder(join(dir, 'a', 'b', 'spool'));
      expect(syncs.count(), 'nothing made, nothing synced').to.equal(3);
    } finally {
      syncs.restore();
    }
  });
});
