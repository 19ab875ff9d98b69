import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeOwnerOnlyDir } from '../../../scripts/lib/owner-only-dir.ts';

describe('makeOwnerOnlyDir', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'owner-only-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('makes the folder 0700 and the folders above it as mkdir makes any, so another account passes them', () => {
    const umask = process.umask();
    makeOwnerOnlyDir(join(root, 'srv', 'stack', 'data'));
    expect(modeOf(join(root, 'srv', 'stack', 'data'))).to.equal(0o700);
    for (const above of [join(root, 'srv'), join(root, 'srv', 'stack')])
      expect(modeOf(above)).to.equal(0o777 & ~umask);
  });

  it('leaves a folder that exists as it is', () => {
    makeOwnerOnlyDir(root);
    expect(modeOf(root)).to.equal(0o700);
    makeOwnerOnlyDir(join(root, 'data'));
    makeOwnerOnlyDir(join(root, 'data'));
    expect(modeOf(join(root, 'data'))).to.equal(0o700);
  });
});
