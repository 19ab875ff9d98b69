import { expect } from 'chai';
import { streamQuery } from '../../../../tray-service/http/api-schema/stream-schemas.ts';

describe('streamQuery', () => {
  const message = (value: unknown) => {
    const result = streamQuery.safeParse(value);
    return result.success ? undefined : result.error.issues[0]?.message;
  };

  it('names the length limit of a too-long ticket or event id (not "expected one ...")', () => {
    expect(message({ ticket: 'x'.repeat(65) })).to.equal('expected a ticket of at most 64 characters');
    expect(message({ lastEventId: 'x'.repeat(1_025) })).to.equal(
      'expected an event id of at most 1024 characters',
    );
  });
  it('still says one value is expected when a parameter is repeated', () => {
    expect(message({ ticket: ['a', 'b'] })).to.equal('expected one ticket');
    expect(message({ lastEventId: ['a', 'b'] })).to.equal('expected one event id');
  });
});
