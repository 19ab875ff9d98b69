import { expect } from 'chai';
import { checkTemplate } from '../../../tray-service/messages/check-template.ts';

/** A message that must show the latest actor and the count of the others. */
const allowed = ['actor1', 'others'] as const;

describe('checkTemplate', () => {
  // Each template, and every problem a translator is told about it, in order.
  const cases: Array<[string, string[]]> = [
    ["{{actor1}} {{plural others one='#' other='#'}}{{!-- note --}}", []],
    [
      "{{@actor1}} {{plural others one='#' other='#'}}",
      [
        'unknown placeholder {{@actor1}}; this message can use {{actor1}}, {{others}}',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    [
      "{{../actor1}} {{plural others one='#' other='#'}}",
      [
        'unknown placeholder {{../actor1}}; this message can use {{actor1}}, {{others}}',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    [
      "{{actor1.name}} {{plural others one='#' other='#'}}",
      [
        'unknown placeholder {{actor1.name}}; this message can use {{actor1}}, {{others}}',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    [
      '{{actor1}} {{plural}}',
      [
        '{{plural}} takes one number, {{plural others one=... other=...}}',
        "{{plural}} lacks the form(s) one, other that en's plural rules choose",
        'does not use {{others}}, which this message must show',
      ],
    ],
    [
      "{{actor1}} {{plural others others one='#' other='#'}}",
      [
        '{{plural}} takes one number, {{plural others one=... other=...}}',
        'does not use {{others}}, which this message must show',
      ],
    ],
    [
      "{{actor1}} {{plural 3 one='#' other='#'}}",
      [
        '{{plural}} takes one number, {{plural others one=... other=...}}',
        'does not use {{others}}, which this message must show',
      ],
    ],
    [
      "{{actor1}} {{plural actor1 one='#' other='#'}}",
      [
        '{{plural}} takes one number, {{plural others one=... other=...}}',
        'does not use {{others}}, which this message must show',
      ],
    ],
    ["{{actor1}} {{plural others one=x other='#'}}", ['{{plural}} form "one" must be a quoted text']],
    [
      "{{actor1}} {{plural others few='#' other='#'}}",
      [
        '{{plural}} form "few" is not a plural category of en (it has one, other)',
        "{{plural}} lacks the form(s) one that en's plural rules choose",
      ],
    ],
    // Handlebars would use the first copy and the plain function (compileMessage) the last.
    ["{{actor1}} {{plural others one='#' other='#' one='# x'}}", ['{{plural}} form "one" is given twice']],
    [
      "{{actor1}} {{plural others one='#' other='#' other='# x' other='# y'}}",
      ['{{plural}} form "other" is given twice'],
    ],
    [
      "{{list actor1 (plural others other='#' one='#' other='# x')}}",
      ['{{plural}} form "other" is given twice'],
    ],
    [
      "{{actor1}} {{plural others few='#' one='#' few='#' other='#'}}",
      [
        '{{plural}} form "few" is not a plural category of en (it has one, other)',
        '{{plural}} form "few" is given twice',
      ],
    ],
    [
      '{{actor1}} {{plural others}}',
      ["{{plural}} lacks the form(s) one, other that en's plural rules choose"],
    ],
    [
      "{{list actor1}} {{plural others one='#' other='#'}}",
      ['{{list}} joins two or more values, {{list actor1 actor2}}'],
    ],
    [
      "{{list actor1 (plural others one='#' other='#') x=1}}",
      ['{{list}} joins two or more values, {{list actor1 actor2}}'],
    ],
    ["{{list actor1 (plural others one='#' other='#')}}", []],
    ["{{list actor1 3}} {{plural others one='#' other='#'}}", ['NumberLiteral values are not supported']],
    ["{{list actor1 'and'}} {{plural others one='#' other='#'}}", []],
    [
      "{{#if actor1}}x{{/if}} {{plural others one='#' other='#'}}",
      [
        'BlockStatement (blocks, partials, decorators) is not supported in messages',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    [
      "{{'literal'}} {{actor1}} {{plural others one='#' other='#'}}",
      ['StringLiteral in {{ }} is not a placeholder; this message can use {{actor1}}, {{others}}'],
    ],
    [
      "{{shout actor1}} {{plural others one='#' other='#'}}",
      [
        'unknown helper {{shout}}; the helpers are plural, list',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    [
      "{{actor1 x='y'}} {{plural others one='#' other='#'}}",
      [
        'unknown helper {{actor1}}; the helpers are plural, list',
        'does not use {{actor1}}, which this message must show',
      ],
    ],
    ['{{actor1}} {{others}}', ["write {{plural others ...}} so the number takes en's plural forms"]],
    [
      '{{list actor1 (3 others)}}',
      [
        'unknown helper {{NumberLiteral}}; the helpers are plural, list',
        'does not use {{others}}, which this message must show',
      ],
    ],
  ];
  cases.push([
    "{{actor1}} {{plural 'others' one='#' other='#'}}",
    [
      '{{plural}} takes one number, {{plural others one=... other=...}}',
      'does not use {{others}}, which this message must show',
    ],
  ]);
  for (const [template, problems] of cases) {
    it(`${problems.length === 0 ? 'accepts' : 'explains what is wrong with'} ${template}`, () => {
      const checked = checkTemplate(template, allowed, 'en');
      expect(checked.problems).to.deep.equal(problems);
      // Only a template without problems is handed on to be compiled.
      expect('ast' in checked).to.equal(problems.length === 0);
    });
  }

  it('reports a syntax error on one line, whitespace collapsed, without Handlebars internals', () => {
    const { problems } = checkTemplate('a  b\n\n {{actor1', allowed, 'en');
    expect(problems).to.have.lengthOf(1);
    expect(problems[0]).to.match(
      /^Handlebars syntax error: Parse error on line 3: a b \{\{actor1 -+\^ Expecting /,
    );
    expect(problems[0]).to.not.match(/\s{2}|\n/);
  });
});
