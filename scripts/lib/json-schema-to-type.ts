/** A JSON Schema node as z.toJSONSchema emits it, reduced to what the tray API uses. */
export interface JsonSchemaNode {
  type?: string | string[];
  properties?: Record<string, JsonSchemaNode>;
  required?: string[];
  additionalProperties?: boolean | JsonSchemaNode;
  items?: JsonSchemaNode;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchemaNode[];
  oneOf?: JsonSchemaNode[];
  allOf?: JsonSchemaNode[];
  description?: string;
}

/**
 * Writes a TypeScript type for a JSON Schema node. Kept to the constructs the tray API's zod
 * schemas produce; anything else becomes `unknown` rather than a guess, so the types never
 * promise more than the schema does.
 */
export function jsonSchemaToType(node: JsonSchemaNode, indent = ''): string {
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((value) => JSON.stringify(value)).join(' | ');
  const union = node.anyOf ?? node.oneOf;
  if (union) return union.map((member) => jsonSchemaToType(member, indent)).join(' | ');
  if (node.allOf) return node.allOf.map((member) => `(${jsonSchemaToType(member, indent)})`).join(' & ');
  if (Array.isArray(node.type)) {
    return node.type.map((type) => jsonSchemaToType({ ...node, type }, indent)).join(' | ');
  }
  switch (node.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return node.items ? `Array<${jsonSchemaToType(node.items, indent)}>` : 'unknown[]';
    case 'object':
      return objectType(node, indent);
    default:
      return 'unknown';
  }
}

function objectType(node: JsonSchemaNode, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(node.required ?? []);
  const lines = Object.entries(node.properties ?? {}).map(([name, property]) => {
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
    const optional = required.has(name) ? '' : '?';
    return `${inner}${key}${optional}: ${jsonSchemaToType(property, inner)};`;
  });
  if (typeof node.additionalProperties === 'object') {
    lines.push(`${inner}[key: string]: ${jsonSchemaToType(node.additionalProperties, inner)};`);
  }
  if (lines.length === 0) return 'Record<string, unknown>';
  return `{\n${lines.join('\n')}\n${indent}}`;
}
