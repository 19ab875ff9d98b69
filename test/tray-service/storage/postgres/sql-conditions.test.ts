import { expect } from 'chai';
import { SqlConditions } from '../../../../tray-service/storage/postgres/sql-conditions.ts';

describe('storage/postgres SqlConditions', () => {
  it('numbers placeholders in the order values are added and joins conditions with AND', () => {
    const where = new SqlConditions().and((p) => `a = ${p('x')}`).and((p) => `(b, c) < (${p(1)}, ${p('y')})`);
    expect(where.where()).to.equal('WHERE a = $1 AND (b, c) < ($2, $3)');
    expect(`LIMIT ${where.param(11)}`).to.equal('LIMIT $4');
    expect(where.values).to.deep.equal(['x', 1, 'y', 11]);
  });

  it('gives no WHERE at all without conditions', () => {
    expect(new SqlConditions().where()).to.equal('');
  });
});
