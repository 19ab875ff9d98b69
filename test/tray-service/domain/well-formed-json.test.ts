import { expect } from 'chai';
import { wellFormedJson } from '../../../tray-service/domain/well-formed-json.ts';

describe('domain/well-formed-json', () => {
  it('replaces each lone surrogate with U+FFFD in strings, keys, arrays and nested objects', () => {
    const fixed = wellFormedJson({
      name: 'Ben \ud83d',
      ['k\udc00']: ['ok', 'tail \udc00', { deep: '\ud83d\ud83d x' }],
      n: 3,
      nothing: null,
    });
    expect(fixed).to.deep.equal({
      name: 'Ben \uFFFD',
      ['k\uFFFD']: ['ok', 'tail \uFFFD', { deep: '\uFFFD\uFFFD x' }],
      n: 3,
      nothing: null,
    });
  });

  it('keeps whole surrogate pairs, and returns a value without a lone one as it is, uncopied', () => {
    const value = { name: 'Ben \ud83d\ude00', list: ['a', { b: 'c' }] };
    expect(wellFormedJson(value)).to.equal(value);
    expect(wellFormedJson('\ud83d\ude00')).to.equal('\ud83d\ude00');
  });

  it('copies only what changes: the caller’s value is left as it was', () => {
    const inner = { keep: 'same' };
    const value = { inner, broken: '\ud83d' };
    const fixed = wellFormedJson(value);
    expect(value.broken).to.equal('\ud83d');
    expect(fixed.inner).to.equal(inner);
  });
});
