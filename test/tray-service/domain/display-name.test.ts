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

  // Zero-width and other format characters are no controls and stay in a name (a ZWJ joins an
  // emoji, a ZWNJ shapes Persian), but a name of nothing else shows as nothing.
  it('gives the id for a name of invisible format characters only (zero-width space, joiners, marks)', () => {
    for (const blank of ['\u200b', '\u200c\u200d', ' \u2060\ufeff ', '\u200e\u200f', '\u00ad'])
      expect(nameOrId(blank, 'u-ana'), JSON.stringify(blank)).to.equal('u-ana');
    expect(nameOrId('\u{1F468}\u200d\u{1F469}', 'u-ana'), 'an emoji joined by a ZWJ').to.equal(
      '\u{1F468}\u200d\u{1F469}',
    );
  });

  // Some characters that draw nothing are no format characters: the Hangul fillers (letters), the
  // combining grapheme joiner (a mark) and the blank braille pattern (a symbol).
  it('gives the id for a name of other characters that draw nothing (Hangul fillers, braille blank)', () => {
    for (const blank of ['\u3164', '\u115f\u1160', '\uffa0', '\u034f', '\u2800', ' \u3164\u2800 '])
      expect(nameOrId(blank, 'u-ana'), JSON.stringify(blank)).to.equal('u-ana');
    expect(nameOrId('\u3164Ana', 'u-ana'), 'a filler beside a visible name').to.equal('\u3164Ana');
  });

  it('keeps a name of one visible character among controls (the messages show that character)', () => {
    expect(nameOrId('\u202e.\u0007', 'u-ana')).to.equal('\u202e.\u0007');
  });
});
