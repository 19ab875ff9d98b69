import { expect } from 'chai';
import { isJsonContentType } from '../../../receiver/decision/is-json-content-type.ts';

describe('isJsonContentType', () => {
  for (const header of [
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
  ]) {
    it(`accepts ${header}`, () => expect(isJsonContentType(header)).to.equal(true));
  }
  for (const header of [
    undefined,
    '',
    'text/json',
    'application/jsonx',
    'application/json; charset=latin1',
    'application/json; boundary=x',
    // Unbalanced quotes: malformed, whatever the charset they hold.
    'application/json; charset="utf-8',
    'application/json; charset=utf-8"',
    'application/x-www-form-urlencoded',
  ]) {
    it(`refuses ${String(header)}`, () => expect(isJsonContentType(header)).to.equal(false));
  }
});
