import { expect } from 'chai';
import { storedId } from '../../../tray-service/domain/stored-text.ts';

describe('storedId', () => {
  const id = storedId(10);
  const message = (value: unknown) => {
    const result = id.safeParse(value);
    return result.success ? undefined : result.error.issues[0]?.message;
  };

  it('names its length limit for a longer id (not "expected a string")', () => {
    expect(message('x'.repeat(11))).to.equal('expected a string of at most 10 characters');
  });
  it('names what is wrong with an empty, non-string or U+0000 id', () => {
    expect(message('')).to.equal('expected a non-empty string');
    expect(message(5)).to.equal('expected a string');
    expect(message('a\u0000')).to.equal('expected no U+0000 character and no lone surrogate');
    expect(message('x'.repeat(10))).to.equal(undefined);
  });
  it('refuses a lone surrogate, which storage would keep as U+FFFD (another id), and keeps a pair', () => {
    for (const lone of ['a\uD800', '\uDFFFa', 'a\uDBFF\uDBFFb'])
      expect(message(lone)).to.equal('expected no U+0000 character and no lone surrogate');
    expect(message('a\uD83D\uDE00')).to.equal(undefined);
    expect(message('a\uFFFD')).to.equal(undefined);
  });
});
