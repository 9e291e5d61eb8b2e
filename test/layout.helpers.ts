/**
 * The source's shape, measured with the TypeScript compiler's own parser: how long each
 * function is, and which modules import which (to find import circles).
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export interface FunctionLength {
  /** Path relative to the folder measured, with forward slashes. */
  file: string;
  /** 1-based line where the function starts. */
  line: number;
  name: string;
  lines: number;
}

const SOURCE_SUFFIXES = ['.ts', '.cts', '.mts'];

export async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && SOURCE_SUFFIXES.some((suffix) => entry.name.endsWith(suffix)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function parse(file: string): Promise<ts.SourceFile> {
  return ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

function propertyName(name: ts.PropertyName | ts.BindingName): string | undefined {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/**
 * The name a function goes by: its own (declarations, methods, named function expressions),
 * else the name it is assigned to (`const f = () => …`, `{ f: () => … }`, `this.f = …`), else
 * `<anonymous>` (a callback: nested ones also count in the function holding them).
 */
function functionName(node: ts.FunctionLikeDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const own = node.name && propertyName(node.name);
  if (own) return own;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return propertyName(parent.name) ?? '<anonymous>';
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return parent.left.getText();
  }
  return '<anonymous>';
}

/** Every function in the files under `dir`, with its length in lines (first to last, inclusive). */
export async function measureFunctions(dir: string): Promise<FunctionLength[]> {
  const found: FunctionLength[] = [];
  for (const path of await sourceFiles(dir)) {
    const source = await parse(path);
    const file = relative(dir, path).split('\\').join('/');
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        found.push({ file, line: first + 1, name: functionName(node as ts.FunctionLikeDeclaration), lines: last - first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Which local modules each file under `dir` imports or re-exports, type-only imports included. */
export async function importGraph(dir: string): Promise<Map<string, string[]>> {
  const files = await sourceFiles(dir);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const path of files) {
    const source = await parse(path);
    const targets = new Set<string>();
    const note = (specifier: ts.Expression | undefined): void => {
      if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
      // Sources import each other by their compiled names (./x.js); map back to ./x.ts.
      const target = resolve(dirname(path), specifier.text).replace(/\.(c|m)?js$/, '.$1ts');
      if (known.has(target)) targets.add(target);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) note(node.moduleSpecifier);
      else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
        note(node.moduleReference.expression);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        note(node.arguments[0]);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        note(node.argument.literal as ts.Expression);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.set(relative(dir, path).split('\\').join('/'), [...targets].map((target) => relative(dir, target).split('\\').join('/')));
  }
  return graph;
}

/** The import circles of a graph: its strongly connected components of more than one file (or a file importing itself). */
export function importCircles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, recursive: the source tree is a few hundred files deep at most.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const connect = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return circles;
}
