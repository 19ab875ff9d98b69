import { expect } from 'chai';
import { parseQueryString } from '../../../tray-service/http/parse-query-string.ts';

describe('parseQueryString (the tray and admin apps’ query parser)', () => {
  it('makes a repeated key an array and never a nested object', () => {
    expect(parseQueryString('a=1&a=2&b[c]=3&__proto__=x')).to.deep.equal({
      a: ['1', '2'],
      'b[c]': '3',
      ['__proto__']: 'x',
    });
  });

  it('keeps every key, past the 1,000 Node keeps by default', () => {
    const query = parseQueryString(
      `${'&'.repeat(1000)}${Array.from({ length: 1500 }, (_, n) => `k${n}=${n}`).join('&')}`,
    );
    expect(Object.keys(query)).to.have.lengthOf(1500);
    expect(query.k1499).to.equal('1499');
  });
});
