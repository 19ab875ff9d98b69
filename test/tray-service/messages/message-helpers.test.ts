import { expect } from 'chai';
import { createMessageHelpers, pluralCategoriesOf } from '../../../tray-service/messages/message-helpers.ts';

/** How Handlebars calls a helper: the arguments, then an options object carrying the hash. */
const withHash = (hash: Record<string, string>) => ({ hash });

describe('message helpers', () => {
  describe('{{plural}}', () => {
    const { plural } = createMessageHelpers('en');

    it("picks the locale's form and writes the number in the locale's digits", () => {
      expect(plural(1, withHash({ one: '# other', other: '# others' }))).to.equal('1 other');
      expect(plural(1200, withHash({ one: '# other', other: '# others' }))).to.equal('1,200 others');
    });

    it('falls back to the "other" form, then to the bare number', () => {
      expect(plural(1, withHash({ other: '# people' }))).to.equal('1 people');
      expect(plural(3, withHash({}))).to.equal('3');
    });

    for (const bad of ['3', Number.NaN, Number.POSITIVE_INFINITY, undefined]) {
      it(`refuses ${String(bad)}, which is not a finite number`, () => {
        expect(() => plural(bad, withHash({ other: '#' }))).to.throw(
          TypeError,
          `{{plural}} expects a number, got ${String(bad)}`,
        );
      });
    }
  });

  describe('{{list}}', () => {
    it("joins the values with the locale's conjunction, ignoring Handlebars' options", () => {
      expect(createMessageHelpers('en').list('Ana', 'Ben', withHash({}))).to.equal('Ana and Ben');
      expect(createMessageHelpers('es').list('Ana', 'Inés', withHash({}))).to.equal('Ana e Inés');
    });
  });

  it('names the plural categories a locale uses', () => {
    expect(pluralCategoriesOf('en')).to.have.members(['one', 'other']);
  });
});
