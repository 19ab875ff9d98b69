import { expect } from 'chai';
import { MAX_USER_ID_LENGTH } from '../../../tray-service/domain/id-limits.ts';
import { isUsableUserId } from '../../../tray-service/domain/user-id.ts';

describe('isUsableUserId', () => {
  it('takes ids of any script, with spaces inside or around them, up to MAX_USER_ID_LENGTH', () => {
    for (const id of [
      'u-ana',
      'ana maria',
      ' ana',
      'أليس',
      'émile',
      'victim\u{1F600}',
      'x'.repeat(MAX_USER_ID_LENGTH),
    ])
      expect(isUsableUserId(id), JSON.stringify(id)).to.equal(true);
  });

  it('refuses empty, whitespace-only, too long and malformed ids', () => {
    for (const id of ['', '   ', '\t', '\u00A0\u3000', 'x'.repeat(MAX_USER_ID_LENGTH + 1), 'a\uD800'])
      expect(isUsableUserId(id), JSON.stringify(id)).to.equal(false);
  });

  it('refuses control, invisible format and separator characters anywhere', () => {
    for (const char of [
      '\u0000',
      '\u001B',
      '\u007F',
      '\u009B',
      '\u200B',
      '\u200D',
      '\u00AD',
      '\uFEFF',
      '\u202E',
      '\u2066',
      '\u2028',
      '\u2029',
    ])
      expect(isUsableUserId(`ali${char}ce`), JSON.stringify(char)).to.equal(false);
  });
});
