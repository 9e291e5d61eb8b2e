/**
 * A JSON Schema checker for the trimmed schemas in test/fixtures/schemas: `type`, `const`,
 * `enum`, `properties`, `required`, `additionalProperties`, `items` and `$ref` to a definition,
 * which is all they use. Returns every problem, each with the path of the value at fault.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

export interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  $ref?: string;
}

export interface SchemaFile {
  definitions: Record<string, Schema>;
}

export function readSchema(name: string): SchemaFile {
  return JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'schemas', name), 'utf8')) as SchemaFile;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The problems of `value` against `schema` (none: it conforms). */
export function checkSchema(file: SchemaFile, schema: Schema, value: unknown, path = ''): string[] {
  if (schema.$ref !== undefined) {
    const target = file.definitions[schema.$ref.replace('#/definitions/', '')];
    if (target === undefined) throw new Error(`the schema has no ${schema.$ref}`);
    return checkSchema(file, target, value, path);
  }
  const at = path || '(top)';
  const type = typeOf(value);
  if (schema.type !== undefined) {
    const allowed = ([] as string[]).concat(schema.type);
    if (!allowed.includes(type) && !(type === 'integer' && allowed.includes('number'))) return [`${at}: ${type}, expected ${allowed.join(' or ')}`];
  }
  if ('const' in schema && value !== schema.const) return [`${at}: ${JSON.stringify(value)}, expected ${JSON.stringify(schema.const)}`];
  if (schema.enum !== undefined && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)}, expected one of ${schema.enum.join(', ')}`];
  const problems: string[] = [];
  if (type === 'array' && schema.items !== undefined) {
    (value as unknown[]).forEach((item, i) => problems.push(...checkSchema(file, schema.items!, item, `${path}[${i}]`)));
  }
  if (type === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in object)) problems.push(`${at}: ${key} is required`);
    for (const [key, item] of Object.entries(object)) {
      const where = path ? `${path}.${key}` : key;
      const property = schema.properties?.[key];
      if (property !== undefined) problems.push(...checkSchema(file, property, item, where));
      else if (schema.additionalProperties === false) problems.push(`${where}: unknown field`);
      else if (typeof schema.additionalProperties === 'object') problems.push(...checkSchema(file, schema.additionalProperties, item, where));
    }
  }
  return problems;
}
