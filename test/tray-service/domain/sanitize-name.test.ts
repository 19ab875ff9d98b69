import { expect } from 'chai';
import { sanitizeName } from '../../../tray-service/domain/sanitize-name.ts';

describe('sanitizeName', () => {
  it('turns each run of line breaks and tabs into one space', () => {
    expect(sanitizeName('Ana\n\nBen')).to.equal('Ana Ben');
    expect(sanitizeName('Ana\r\n\tBen')).to.equal('Ana Ben');
    expect(sanitizeName('Ana\vBen\u2028Cid\u0085Dee')).to.equal('Ana Ben Cid Dee');
  });

  it('keeps every printable letter, the letter V included', () => {
    expect(sanitizeName('Vera Vázquez')).to.equal('Vera Vázquez');
  });

  it('removes other controls and bidi overrides, and trims', () => {
    expect(sanitizeName(' Ana\u0000\u202eBen\u2066 ')).to.equal('AnaBen');
  });

  // Every message starts with a name, and an invisible right-to-left mark first in it made a client
  // that takes direction from the text (dir=auto, Android's default) lay the message out right to
  // left.
  it('removes the invisible direction marks (LRM, RLM, ALM)', () => {
    expect(sanitizeName('\u200fBob')).to.equal('Bob');
    expect(sanitizeName('A\u200en\u061ca')).to.equal('Ana');
  });
});
