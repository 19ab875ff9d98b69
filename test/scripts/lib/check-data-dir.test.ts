import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDataDir } from '../../../scripts/lib/check-data-dir.ts';

describe('checkDataDir', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'data-dir-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // createWhole writes dev-secrets.json through dev-secrets.json.<pid>.new: a start killed
  // between the two leaves it, and the next npm start refused its own directory.
  it("takes a directory holding the stack's files and what a killed start leaves behind", () => {
    for (const entry of ['dev-secrets.json', 'dev-secrets.json.4242.new', 'stack.env', 'stack.env.new'])
      writeFileSync(join(dir, entry), '');
    expect(() => checkDataDir(dir)).not.to.throw();
  });

  // takePidLock makes stack.pid.takeover while it replaces a dead holder's lock: a start killed
  // then left it, and the next npm start refused the directory holding the secrets and databases.
  it('takes a directory holding the lock take-over file a killed start left', () => {
    for (const entry of ['dev-secrets.json', 'postgres', 'stack.pid', 'stack.pid.takeover'])
      writeFileSync(join(dir, entry), '');
    expect(() => checkDataDir(dir)).not.to.throw();
  });

  it('refuses one holding anything else, naming the variable and the entries', () => {
    for (const entry of ['dev-secrets.json', 'dev-secrets.json.x.new', 'notes.txt'])
      writeFileSync(join(dir, entry), '');
    expect(() => checkDataDir(dir)).to.throw(
      `STACK_DATA_DIR: ${dir} holds files of its own (dev-secrets.json.x.new, notes.txt)`,
    );
  });
});
