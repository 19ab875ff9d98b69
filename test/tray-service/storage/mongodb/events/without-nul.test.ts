import { expect } from 'chai';
import { withoutNul } from '../../../../../tray-service/storage/mongodb/events/without-nul.ts';

describe('storage/mongodb withoutNul', () => {
  it('replaces U+0000 with U+FFFD in every key and string, keeping the shape and other values', () => {
    const at = new Date();
    const cleaned = withoutNul({
      'k\u0000': ['x\u0000', 1, true, null, { 'deep\u0000': '\u0000' }],
      n: 2.5,
      at,
      empty: {},
    });
    expect(cleaned).to.deep.equal({
      'k\uFFFD': ['x\uFFFD', 1, true, null, { 'deep\uFFFD': '\uFFFD' }],
      n: 2.5,
      at,
      empty: {},
    });
    expect(cleaned.at, 'a Date stays a Date').to.equal(at);
  });

  it('copies nothing when there is nothing to replace', () => {
    const value = { a: ['b', { c: 'd' }], at: new Date() };
    expect(withoutNul(value)).to.equal(value);
    const changed = withoutNul({ same: value.a, other: '\u0000' });
    expect(changed.same, 'an unchanged part is shared').to.equal(value.a);
  });

  it('keeps a key named __proto__ a key', () => {
    const parsed = JSON.parse('{"__proto__": {"x": "\\u0000"}, "y": 1}') as Record<string, unknown>;
    const cleaned = withoutNul(parsed);
    expect(Object.keys(cleaned)).to.deep.equal(['__proto__', 'y']);
    expect(Object.getOwnPropertyDescriptor(cleaned, '__proto__')?.value).to.deep.equal({ x: '\uFFFD' });
  });
});
