import { expect } from 'chai';
import { parseIsoDateTime } from '../../../../tray-service/http/api-schema/iso-date-time.ts';

describe('parseIsoDateTime', () => {
  it('reads a full date-time with its offset as epoch ms, leap days and fractions included', () => {
    expect(parseIsoDateTime('2026-11-28T10:00:00Z')).to.equal(Date.UTC(2026, 10, 28, 10));
    expect(parseIsoDateTime('2026-11-28T10:00Z')).to.equal(Date.UTC(2026, 10, 28, 10));
    expect(parseIsoDateTime('2028-02-29T10:00:00.5+05:30')).to.equal(Date.UTC(2028, 1, 29, 4, 30, 0, 500));
    expect(parseIsoDateTime('2026-12-31T23:59:59.999-01:00')).to.equal(Date.UTC(2027, 0, 1, 0, 59, 59, 999));
    // A year below 100, which Date.UTC would read as 19xx.
    expect(parseIsoDateTime('0001-01-01T00:00:00Z')).to.equal(-62_135_596_800_000);
  });

  it('is "invalid" for a day or time that does not exist, which Date.parse would roll over', () => {
    for (const value of [
      '2027-02-31T00:00:00Z',
      '2026-02-29T10:00:00Z',
      '2026-11-31T10:00:00Z',
      '2026-01-20T24:00:00Z',
      '2026-01-20T10:60:00Z',
      '2026-01-20T10:00:60Z',
      '2026-13-01T10:00:00Z',
      '2026-00-10T10:00:00Z',
      '2026-01-00T10:00:00Z',
      '2026-01-20T10:00:00+24:00',
      '2026-01-20T10:00:00+05:60',
    ])
      expect(parseIsoDateTime(value), value).to.equal('invalid');
  });

  it('is undefined for anything but a full date-time with its offset', () => {
    for (const value of [
      '2026-11-28',
      '2026-11-28T10:00:00',
      '2026-11-28 10:00:00Z',
      'tomorrow',
      '２０２６-11-28T10:00Z',
    ])
      expect(parseIsoDateTime(value), value).to.equal(undefined);
  });
});
