import { expect } from 'chai';
import { storableJson } from '../../../tray-service/domain/storable-json.ts';

describe('domain/storable-json', () => {
  it('replaces each U+0000 and each lone surrogate with U+FFFD in strings, keys, arrays and nested objects', () => {
    const fixed = storableJson({
      nul: 'a\u0000b',
      ['n\u0000']: 1,
      name: 'Ben \ud83d',
      ['k\udc00']: ['ok', 'tail \udc00', { deep: '\ud83d\ud83d x' }],
      n: 3,
      nothing: null,
    });
    expect(fixed).to.deep.equal({
      nul: 'a\uFFFDb',
      ['n\uFFFD']: 1,
      name: 'Ben \uFFFD',
      ['k\uFFFD']: ['ok', 'tail \uFFFD', { deep: '\uFFFD\uFFFD x' }],
      n: 3,
      nothing: null,
    });
  });

  it('keeps whole surrogate pairs, and returns a value without a lone one as it is, uncopied', () => {
    const value = { name: 'Ben \ud83d\ude00', list: ['a', { b: 'c' }] };
    expect(storableJson(value)).to.equal(value);
    expect(storableJson('\ud83d\ude00')).to.equal('\ud83d\ude00');
  });

  it('copies only what changes: the caller’s value is left as it was', () => {
    const inner = { keep: 'same' };
    const value = { inner, broken: '\ud83d' };
    const fixed = storableJson(value);
    expect(value.broken).to.equal('\ud83d');
    expect(fixed.inner).to.equal(inner);
  });
});
