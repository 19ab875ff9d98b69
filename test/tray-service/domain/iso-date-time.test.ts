import { expect } from 'chai';
import { parseIsoDateTime } from '../../../tray-service/domain/iso-date-time.ts';

describe('parseIsoDateTime', () => {
  it('reads a full date-time with its offset as epoch ms, leap days and fractions included', () => {
    expect(parseIsoDateTime('2026-11-28T10:00:00Z')).to.equal(Date.UTC(2026, 10, 28, 10));
    expect(parseIsoDateTime('2026-11-28T10:00Z')).to.equal(Date.UTC(2026, 10, 28, 10));
    expect(parseIsoDateTime('2028-02-29T10:00:00.5+05:30')).to.equal(Date.UTC(2028, 1, 29, 4, 30, 0, 500));
    expect(parseIsoDateTime('2026-12-31T23:59:59.999-01:00')).to.equal(Date.UTC(2027, 0, 1, 0, 59, 59, 999));
    // A year below 100, which Date.UTC would read as 19xx.
    expect(parseIsoDateTime('0001-01-01T00:00:00Z')).to.equal(-62_135_596_800_000);
  });

  it('takes the offset as ±hh:mm, ±hhmm or ±hh, and the basic form of the date and time', () => {
    const at = Date.UTC(2026, 10, 28, 10);
    for (const value of [
      '2026-11-28T10:00:00+0000',
      '2026-11-28T10:00:00+00',
      '2026-11-28T10:00:00-00:00',
      '2026-11-28T11:30:00+01:30',
      '2026-11-28T11:30:00+0130',
      '2026-11-28T07:00-03',
      '2026-11-28T05:15-0445',
      '20261128T100000Z',
      '20261128T1000Z',
      '20261128T113000+0130',
    ])
      expect(parseIsoDateTime(value), value).to.equal(at);
  });

  it('keeps a fraction of any length to the millisecond, truncated, after `.` or `,`', () => {
    const at = Date.UTC(2026, 10, 30, 2, 38, 53);
    expect(parseIsoDateTime('2026-11-30T02:38:53.097000Z')).to.equal(at + 97);
    expect(parseIsoDateTime('2026-11-30T02:38:53.097999999Z')).to.equal(at + 97);
    expect(parseIsoDateTime('2026-11-30T02:38:53.9999+00')).to.equal(at + 999);
    expect(parseIsoDateTime('2026-11-30T02:38:53,25Z')).to.equal(at + 250);
    expect(parseIsoDateTime('20261130T023853.1+0000')).to.equal(at + 100);
  });

  it('is "does-not-exist" for a day or time that does not exist, which Date.parse would roll over', () => {
    for (const value of [
      '2027-02-31T00:00:00Z',
      '2026-02-29T10:00:00Z',
      '2026-11-31T10:00:00Z',
      '2026-01-20T24:00:00Z',
      '2026-01-20T24:00Z',
      '2026-01-20T10:60:00Z',
      '2026-01-20T10:00:60Z',
      '2026-13-01T10:00:00Z',
      '2026-00-10T10:00:00Z',
      '2026-01-00T10:00:00Z',
      '2026-01-20T10:00:00+24:00',
      '2026-01-20T10:00:00+24',
      '2026-01-20T10:00:00+05:60',
      '20260230T1000Z',
    ])
      expect(parseIsoDateTime(value), value).to.equal('does-not-exist');
  });

  it('is "no-offset" for a time without Z or an offset, whatever its precision', () => {
    for (const value of [
      '2026-11-28T10:00:00',
      '2026-11-28T10:00',
      '2026-11-28T10:00:00.123456',
      '20261128T1000',
    ])
      expect(parseIsoDateTime(value), value).to.equal('no-offset');
  });

  it('is "date-alone" for a date without a time', () => {
    for (const value of ['2026-11-28', '20261128'])
      expect(parseIsoDateTime(value), value).to.equal('date-alone');
  });

  it('is "not-a-date-time" for anything else, mixed or partial forms included', () => {
    for (const value of [
      '2026-11-28 10:00:00Z',
      '2026-11-28t10:00:00z',
      '2026-11-28T10Z',
      '2026-11-28T10:00.5Z',
      '2026-11-28T1000:00Z',
      '2026-1128T10:00Z',
      '2026-11-28T10:00:00+1',
      '2026-11-28T10:00:00+01:0',
      '2026-11-28T10:00:00.Z',
      '2026-11-28T10:00:00Z ',
      '+002026-11-28T10:00:00Z',
      'tomorrow',
      '',
      '２０２６-11-28T10:00Z',
    ])
      expect(parseIsoDateTime(value), value).to.equal('not-a-date-time');
  });
});
