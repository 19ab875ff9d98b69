import { expect } from 'chai';
import { nameOrId } from '../../../tray-service/domain/display-name.ts';
import { sanitizeName } from '../../../tray-service/domain/sanitize-name.ts';

describe('nameOrId', () => {
  it('keeps a name as the payload gives it', () => {
    expect(nameOrId(' Ana María ', 'u-ana')).to.equal(' Ana María ');
  });

  it('gives the id for a name the payload lacks', () => {
    expect(nameOrId(undefined, 'u-ana')).to.equal('u-ana');
  });

  it('gives the id for an empty name, and for one of spaces and line breaks only', () => {
    for (const blank of ['', ' ', '   ', '\t\n', '\u00a0\u3000', '\u2028'])
      expect(nameOrId(blank, 'u-ana'), JSON.stringify(blank)).to.equal('u-ana');
  });

  it('gives the id for a name the messages would show as nothing (controls and bidi marks only)', () => {
    const blank = '\u0000\u0007 \u009b\u202e\u2066\u2069';
    expect(sanitizeName(blank), 'the messages drop every character of it').to.equal('');
    expect(nameOrId(blank, 'u-ana')).to.equal('u-ana');
  });

  it('keeps a name of one visible character among controls (the messages show that character)', () => {
    expect(nameOrId('\u202e.\u0007', 'u-ana')).to.equal('\u202e.\u0007');
  });
});
