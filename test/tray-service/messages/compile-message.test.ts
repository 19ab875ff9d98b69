import { expect } from 'chai';
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { checkTemplate } from '../../../tray-service/messages/check-template.ts';
import { compileMessage } from '../../../tray-service/messages/compile-message.ts';
import { loadCatalogues, shippedCataloguesDir } from '../../../tray-service/messages/load-catalogues.ts';
import type { MessageValues } from '../../../tray-service/messages/message-for-record.ts';
import { createMessageHelpers } from '../../../tray-service/messages/message-helpers.ts';
import { messageKeys } from '../../../tray-service/messages/message-keys.ts';
import { readCatalogueDir } from '../../../tray-service/messages/read-catalogue-dir.ts';

/** A template compiled both ways: by Handlebars, as the catalogues always were, and by compileMessage. */
function bothWays(template: string, locale: string, key: string) {
  const checked = checkTemplate(template, messageKeys.get(key) ?? [], locale);
  if (!checked.ast) throw new Error(`${locale} ${key}: ${checked.problems.join('; ')}`);
  const handlebars = Handlebars.create();
  const helpers = createMessageHelpers(locale);
  handlebars.registerHelper(helpers);
  const reference = handlebars.compile<MessageValues>(checked.ast, {
    strict: true,
    knownHelpersOnly: true,
    knownHelpers: { plural: true, list: true },
    noEscape: true,
  });
  reference({ actor1: 'A', actor2: 'B', others: 3, community: 'C', feedOwner: 'D' });
  const plain = compileMessage(checked.ast, helpers);
  if (!plain) throw new Error(`${locale} ${key}: compileMessage gave nothing`);
  return { reference, plain };
}

const parsed = (template: string) => Handlebars.parse(template);

describe('compileMessage', () => {
  describe('every shipped message', () => {
    const { catalogues } = readCatalogueDir(shippedCataloguesDir);
    const values = fc.record({
      actor1: fc.string({ unit: 'binary' }),
      actor2: fc.string({ unit: 'binary' }),
      others: fc.integer({ min: 0, max: 10_000_000 }),
      community: fc.string({ unit: 'binary' }),
      feedOwner: fc.string({ unit: 'binary' }),
    });
    for (const { locale, messages } of catalogues) {
      it(`${locale}: renders whatever the values exactly as Handlebars does`, () => {
        const compiled = [...messages].map(([key, template]) => bothWays(template, locale, key));
        fc.assert(
          fc.property(values, (given) => {
            for (const { reference, plain } of compiled) expect(plain(given)).to.equal(reference(given));
          }),
          { numRuns: 200 },
        );
      });
    }
  });

  it('is what the shipped catalogues load as, instead of Handlebars’ functions (their runtime set up per call)', () => {
    for (const [locale, messages] of loadCatalogues({ defaultLocale: 'en' }).messages) {
      for (const [key, render] of messages) {
        // Handlebars' compiled functions carry their runtime's set-up (`_setup`).
        expect(Object.hasOwn(render, '_setup'), `${locale} ${key}`).to.equal(false);
      }
    }
  });

  it('joins text, placeholders, plural forms and lists, and drops comments', () => {
    const render = compileMessage(
      parsed("{{! a note }}{{list actor1 actor2}} and {{plural others one='# other' other='# others'}}!"),
      createMessageHelpers('en'),
    );
    expect(render?.({ actor1: 'Ana', actor2: 'Ben', others: 1, community: '', feedOwner: '' })).to.equal(
      'Ana and Ben and 1 other!',
    );
    expect(render?.({ actor1: 'Ana', actor2: 'Ben', others: 1200, community: '', feedOwner: '' })).to.equal(
      'Ana and Ben and 1,200 others!',
    );
  });

  it('inserts names as typed, never escaped', () => {
    const render = compileMessage(parsed('{{actor1}} in {{community}}'), createMessageHelpers('en'));
    expect(
      render?.({ actor1: '<b>Ana</b>', actor2: '', others: 0, community: '&"', feedOwner: '' }),
    ).to.equal('<b>Ana</b> in &"');
  });

  it('gives nothing for what the checked grammar has no place for (blocks, other helpers)', () => {
    const helpers = createMessageHelpers('en');
    expect(compileMessage(parsed('{{#if actor1}}x{{/if}}'), helpers)).to.equal(undefined);
    expect(compileMessage(parsed('{{lookup actor1 actor2}}'), helpers)).to.equal(undefined);
    expect(compileMessage(parsed('{{actor1.name}}'), helpers)).to.equal(undefined);
    expect(compileMessage(parsed('{{> partial}}'), helpers)).to.equal(undefined);
  });
});
