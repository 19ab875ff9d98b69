import Handlebars from 'handlebars';
import { helperNames, pluralCategoriesOf } from './message-helpers.ts';
import type { Placeholder } from './message-keys.ts';

type Node = hbs.AST.Node;
type Expression = hbs.AST.Expression;

export interface CheckedTemplate {
  /** Parsed template, present when there is no problem. */
  ast?: hbs.AST.Program;
  problems: string[];
}

const tag = (name: string) => `{{${name}}}`;
/** The placeholders a message may use, as a translator reads them. */
const usable = (allowed: readonly Placeholder[]) =>
  allowed.length > 0
    ? `this message can use ${allowed.map(tag).join(', ')}`
    : 'this entry takes no placeholder';
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Checks one message template of a catalogue before it is compiled: it must
 * parse, use only plain placeholders, `{{plural}}`, `{{list}}` and comments, and use exactly the
 * placeholders of its message. Problems are sentences for a translator, not Handlebars internals.
 */
export function checkTemplate(
  source: string,
  allowed: readonly Placeholder[],
  locale: string,
): CheckedTemplate {
  let ast: hbs.AST.Program;
  try {
    ast = Handlebars.parse(source);
  } catch (error) {
    return {
      problems: [
        `Handlebars syntax error: ${oneLine(error instanceof Error ? error.message : String(error))}`,
      ],
    };
  }
  const problems: string[] = [];
  const used = new Set<string>();
  const categories = pluralCategoriesOf(locale);

  const checkPath = (path: hbs.AST.PathExpression, inPlural: boolean) => {
    const name = path.original;
    if (path.data || path.depth > 0 || path.parts.length !== 1 || !allowed.includes(name as Placeholder)) {
      problems.push(`unknown placeholder ${tag(name)}; ${usable(allowed)}`);
      return;
    }
    used.add(name);
    if (name === 'others' && !inPlural) {
      problems.push(`write {{plural others ...}} so the number takes ${locale}'s plural forms`);
    }
  };

  const checkPlural = (node: hbs.AST.MustacheStatement | hbs.AST.SubExpression) => {
    const [count, ...rest] = node.params;
    if (
      !count ||
      rest.length > 0 ||
      count.type !== 'PathExpression' ||
      (count as hbs.AST.PathExpression).original !== 'others'
    ) {
      problems.push('{{plural}} takes one number, {{plural others one=... other=...}}');
    } else checkPath(count as hbs.AST.PathExpression, true);
    const given = node.hash?.pairs ?? [];
    const seen = new Set<string>();
    const twice = new Set<string>();
    for (const pair of given) {
      // Handlebars renders the first copy of a form, the plain function (compileMessage) the last,
      // and the cross-check at start-up samples only a few counts: one copy, or no telling which.
      if (seen.has(pair.key)) {
        if (!twice.has(pair.key)) problems.push(`{{plural}} form "${pair.key}" is given twice`);
        twice.add(pair.key);
        continue;
      }
      seen.add(pair.key);
      if (!categories.includes(pair.key)) {
        problems.push(
          `{{plural}} form "${pair.key}" is not a plural category of ${locale} (it has ${categories.join(', ')})`,
        );
      } else if (pair.value.type !== 'StringLiteral') {
        problems.push(`{{plural}} form "${pair.key}" must be a quoted text`);
      }
    }
    const missing = categories.filter((category) => !given.some((pair) => pair.key === category));
    if (missing.length > 0) {
      problems.push(
        `{{plural}} lacks the form(s) ${missing.join(', ')} that ${locale}'s plural rules choose`,
      );
    }
  };

  const checkCall = (node: hbs.AST.MustacheStatement | hbs.AST.SubExpression) => {
    const name = node.path.type === 'PathExpression' ? (node.path as hbs.AST.PathExpression).original : '';
    if (name === 'plural') return checkPlural(node);
    if (name !== 'list') {
      problems.push(
        `unknown helper ${tag(name || String(node.path.type))}; the helpers are ${helperNames.join(', ')}`,
      );
      return;
    }
    if (node.params.length < 2 || (node.hash?.pairs.length ?? 0) > 0) {
      problems.push('{{list}} joins two or more values, {{list actor1 actor2}}');
    }
    for (const param of node.params) checkExpression(param);
  };

  const checkExpression = (node: Expression) => {
    if (node.type === 'PathExpression') checkPath(node as hbs.AST.PathExpression, false);
    else if (node.type === 'SubExpression') checkCall(node as hbs.AST.SubExpression);
    else if (node.type !== 'StringLiteral') problems.push(`${node.type} values are not supported`);
  };

  for (const node of ast.body as Node[]) {
    if (node.type === 'ContentStatement' || node.type === 'CommentStatement') continue;
    if (node.type !== 'MustacheStatement') {
      problems.push(`${node.type} (blocks, partials, decorators) is not supported in messages`);
      continue;
    }
    const mustache = node as hbs.AST.MustacheStatement;
    if (mustache.path.type !== 'PathExpression') {
      problems.push(`${mustache.path.type} in {{ }} is not a placeholder; ${usable(allowed)}`);
      continue;
    }
    const isCall = mustache.params.length > 0 || (mustache.hash?.pairs.length ?? 0) > 0;
    const name = (mustache.path as hbs.AST.PathExpression).original;
    if (isCall || (helperNames as readonly string[]).includes(name)) checkCall(mustache);
    else checkExpression(mustache.path);
  }
  for (const name of allowed) {
    if (!used.has(name)) problems.push(`does not use ${tag(name)}, which this message must show`);
  }
  return problems.length > 0 ? { problems } : { ast, problems };
}
