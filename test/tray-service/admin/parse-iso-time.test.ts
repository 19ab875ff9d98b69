import { expect } from 'chai';
import { parseIsoTime } from '../../../tray-service/admin/parse-iso-time.ts';

describe('parseIsoTime (admin since/until)', () => {
  const accepted: [string, string][] = [
    ['2026-11-20', '2026-11-20T00:00:00.000Z'],
    ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T10:00:00.250+01:00', '2026-11-20T09:00:00.250Z'],
    ['2026-11-20T10:00:00-0230', '2026-11-20T12:30:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    // Stored times are whole milliseconds: a bound between two is taken up to the next, which
    // keeps `since` (inclusive) and `until` (exclusive) right. Cut down, `since=…00.0005Z` took
    // in an event received at …00.000Z, before it, and `until` left that event out.
    ['2026-11-20T23:59:59.123456789Z', '2026-11-20T23:59:59.124Z'],
    ['2026-11-20T10:00:00.0005Z', '2026-11-20T10:00:00.001Z'],
    ['2026-11-20T10:00:00.123000Z', '2026-11-20T10:00:00.123Z'],
    ['2026-11-20T23:59:59.9999Z', '2026-11-21T00:00:00.000Z'],
  ];
  for (const [input, iso] of accepted) {
    it(`reads ${input} as ${iso}`, () => {
      expect(parseIsoTime(input)?.toISOString()).to.equal(iso);
    });
  }

  describe('with a time but no offset', () => {
    it('reads it as UTC, whatever the server time zone (not local time, as new Date() would)', () => {
      expect(parseIsoTime('2026-11-20T10:00')?.toISOString()).to.equal('2026-11-20T10:00:00.000Z');
      expect(parseIsoTime('2026-11-20 10:00:00')?.toISOString()).to.equal('2026-11-20T10:00:00.000Z');
    });
  });

  describe('with a day that does not exist', () => {
    for (const input of [
      '2026-02-30',
      '2026-02-29',
      '2026-04-31T10:00:00Z',
      '2026-13-01',
      '2026-00-10',
      '2026-11-00',
    ]) {
      it(`refuses ${input} instead of rolling it over to another day`, () => {
        expect(parseIsoTime(input)).to.equal(undefined);
      });
    }
  });

  for (const input of [
    'yesterday',
    '2026-11-20T',
    '2026-11-20T::.',
    '2026-11-20T25:00Z',
    '2026-11-20T24:00Z',
    '2026-11-20T10:60Z',
    '2026-11-20T10Z',
    '2026-11-20T10:00+24:00',
    '20261120',
    '٢٠٢٦-11-20',
    '',
  ]) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      expect(parseIsoTime(input)).to.equal(undefined);
    });
  }
});
