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
    expect(message('a\u0000')).to.equal('expected no U+0000 character');
    expect(message('x'.repeat(10))).to.equal(undefined);
  });
});
