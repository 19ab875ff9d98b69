import type { HelperOptions } from 'handlebars';
import type { MessageValues } from './message-for-record.ts';
import type { MessageHelpers } from './message-helpers.ts';

type Render = (values: MessageValues) => string;
type Value = (values: MessageValues) => unknown;

/** Handlebars prints null and undefined as nothing, anything else as `'' + value`. */
const print = (value: unknown): string => (value === null || value === undefined ? '' : `${value as string}`);

/**
 * A checked message (checkTemplate) as a plain function over its values: the message's text and
 * placeholders joined in order, `{{plural}}` and `{{list}}` called directly. Handlebars' own
 * compiled function sets its runtime up again on every call (the helpers copied and wrapped, the
 * prototype-access rules built): about 5 microseconds a message, most of a history page's
 * rendering. Only the checked grammar is known here (text, comments, placeholders, the two
 * helpers, quoted texts as their arguments); for anything else this returns undefined and the
 * caller keeps Handlebars' function.
 */
export function compileMessage(ast: hbs.AST.Program, helpers: MessageHelpers): Render | undefined {
  const call = (node: hbs.AST.MustacheStatement | hbs.AST.SubExpression): Value | undefined => {
    if (node.path.type !== 'PathExpression') return undefined;
    const name = (node.path as hbs.AST.PathExpression).original;
    if (name !== 'plural' && name !== 'list') return undefined;
    const helper = helpers[name];
    const params: Value[] = [];
    for (const param of node.params) {
      const value = expression(param);
      if (!value) return undefined;
      params.push(value);
    }
    const hash: Record<string, string> = {};
    for (const pair of node.hash?.pairs ?? []) {
      if (pair.value.type !== 'StringLiteral') return undefined;
      hash[pair.key] = (pair.value as hbs.AST.StringLiteral).value;
    }
    // What Handlebars passes a helper last; the two helpers read only its hash.
    const options = { hash } as unknown as HelperOptions;
    // The usual arities called directly: a spread of a mapped array made two arrays per call.
    const [first, second] = params;
    if (params.length === 1 && first) return (values) => helper(first(values), options);
    if (params.length === 2 && first && second)
      return (values) => helper(first(values), second(values), options);
    return (values) => helper(...params.map((param) => param(values)), options);
  };

  const expression = (node: hbs.AST.Expression): Value | undefined => {
    if (node.type === 'StringLiteral') {
      const text = (node as hbs.AST.StringLiteral).value;
      return () => text;
    }
    if (node.type === 'SubExpression') return call(node as hbs.AST.SubExpression);
    if (node.type !== 'PathExpression') return undefined;
    const path = node as hbs.AST.PathExpression;
    if (path.data || path.depth > 0 || path.parts.length !== 1) return undefined;
    const name = path.original as keyof MessageValues;
    return (values) => {
      // As Handlebars' strict mode: a value the message needs must be there.
      if (!(name in values)) throw new Error(`"${name}" not defined in the message values`);
      return values[name];
    };
  };

  const parts: (string | Value)[] = [];
  for (const node of ast.body) {
    if (node.type === 'ContentStatement') parts.push((node as hbs.AST.ContentStatement).value);
    else if (node.type === 'CommentStatement') continue;
    else if (node.type === 'MustacheStatement') {
      const mustache = node as hbs.AST.MustacheStatement;
      const named =
        mustache.path.type === 'PathExpression' ? (mustache.path as hbs.AST.PathExpression).original : '';
      const isCall = mustache.params.length > 0 || (mustache.hash?.pairs.length ?? 0) > 0 || named in helpers;
      const value = isCall ? call(mustache) : expression(mustache.path as hbs.AST.Expression);
      if (!value) return undefined;
      parts.push(value);
    } else return undefined;
  }
  return (values) => {
    let text = '';
    for (const part of parts) text += typeof part === 'string' ? part : print(part(values));
    return text;
  };
}
