import { expect } from 'chai';
import { jsonDepth } from '../../../receiver/envelope/json-depth.ts';
import { maxJsonDepth, validateEnvelope } from '../../../receiver/envelope/validate-envelope.ts';

const check = (text: string | Buffer) => validateEnvelope(Buffer.isBuffer(text) ? text : Buffer.from(text));

describe('validateEnvelope', () => {
  it('accepts an object with a string event and an object data', () => {
    expect(check('{"event":"post.didCreate","data":{"a":[1]}}')).to.deep.equal({
      ok: true,
      envelope: { event: 'post.didCreate', data: { a: [1] } },
    });
  });

  for (const [text, message] of [
    ['null', 'must be a JSON object'],
    ['{"data":{}}', '"event"'],
    ['{"event":"","data":{}}', '"event"'],
    ['{"event":"x"}', '"data"'],
    ['{"event":"x","data":null}', '"data"'],
    ['{"event":"x","data":"s"}', '"data"'],
    ['{"event":"x","data":{}', 'not valid JSON'],
  ] as const) {
    it(`refuses ${text}`, () => {
      expect(check(text))
        .to.deep.include({ ok: false })
        .and.to.have.property('message')
        .that.includes(message);
    });
  }

  it('refuses invalid UTF-8', () => {
    expect(check(Buffer.from([0x7b, 0xff, 0x7d])).ok).to.equal(false);
  });

  it(`accepts nesting up to ${maxJsonDepth} levels and refuses one more`, () => {
    const nested = (levels: number) =>
      `{"event":"x","data":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 2)}}`;
    expect(check(nested(maxJsonDepth)).ok).to.equal(true);
    expect(check(nested(maxJsonDepth + 1))).to.deep.include({ ok: false });
  });
});

describe('jsonDepth', () => {
  it('ignores brackets inside strings, also after escaped quotes', () => {
    expect(jsonDepth('{"a":"[[[\\"{{{"}', 10)).to.equal(1);
  });
});
