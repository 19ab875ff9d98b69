import { expect } from 'chai';
import { headerLines } from '../../../receiver/decision/header-lines.ts';

describe('headerLines', () => {
  it('returns every value of the header, in order, whatever the case of its name', () => {
    const raw = ['Host', 'x', 'Content-Type', 'application/json', 'X-A', '1', 'content-type', 'text/plain'];
    expect(headerLines(raw, 'content-type')).to.deep.equal(['application/json', 'text/plain']);
    expect(headerLines(raw, 'x-a')).to.deep.equal(['1']);
    expect(headerLines(raw, 'x-b')).to.deep.equal([]);
  });

  it('does not take a value for a name, or a longer name with the same start', () => {
    expect(headerLines(['X', 'content-type', 'Content-Types', 'a'], 'content-type')).to.deep.equal([]);
  });
});
