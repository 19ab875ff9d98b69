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

  it('replaces U+0000 in every key and string of a JSON value, keeping its shape and other values', () => {
    expect(
      storableJson({ 'k\u0000': ['x\u0000', 1, true, null, { deep: '\u0000' }], n: 2.5, empty: {} }),
    ).to.deep.equal({ 'k\uFFFD': ['x\uFFFD', 1, true, null, { deep: '\uFFFD' }], n: 2.5, empty: {} });
  });

  it('leaves a Date (an object that is not plain JSON) as it is', () => {
    const at = new Date();
    const cleaned = storableJson({ 'k\u0000': 'x', at });
    expect(cleaned).to.deep.equal({ 'k\uFFFD': 'x', at });
    expect(cleaned.at, 'a Date stays a Date').to.equal(at);
    const value = { a: ['b', { c: 'd' }], at: new Date() };
    expect(storableJson(value)).to.equal(value);
    const changed = storableJson({ same: value.a, other: '\u0000' });
    expect(changed.same, 'an unchanged part is shared').to.equal(value.a);
  });

  // JSON.parse reads a number too large for a double (1e400) as Infinity; FerretDB refuses it.
  it('makes a number JSON cannot hold null, as JSON.stringify writes it, and leaves the others', () => {
    const parsed = JSON.parse('{"tall": 1e400, "deep": [-1e400, 0.5], "n": 7}') as Record<string, unknown>;
    expect(storableJson(parsed)).to.deep.equal({ tall: null, deep: [null, 0.5], n: 7 });
    expect(storableJson({ tall: Number.NaN })).to.deep.equal({ tall: null });
    const finite = { n: [1, -0, 1e308] };
    expect(storableJson(finite)).to.equal(finite);
  });

  it('keeps a key named __proto__ a key', () => {
    const parsed = JSON.parse('{"__proto__": {"x": "\\u0000"}, "y": 1}') as Record<string, unknown>;
    const cleaned = storableJson(parsed);
    expect(Object.keys(cleaned)).to.deep.equal(['__proto__', 'y']);
    expect(Object.getOwnPropertyDescriptor(cleaned, '__proto__')?.value).to.deep.equal({ x: '\uFFFD' });
  });
});
