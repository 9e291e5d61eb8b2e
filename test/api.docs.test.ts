/**
 * What a developer reads when hovering the library in an editor: the TypeScript compiler lists
 * every export of src/index.ts and every property of the interfaces and object types reachable
 * from them (options, summaries, events, the types inside them, callbacks' arguments), and each
 * needs a doc comment; none may send the reader to a source file the package does not ship.
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const SRC = join(ROOT, 'src') + '/';

interface Documented {
  /** `ImportSummary.counts`, `importClients`, or a path for an inline type (`ExportSummary.filters.status`). */
  name: string;
  /** Where it is declared, relative to the repository. */
  file: string;
  /** The doc comment and its tags, as an editor shows them. */
  doc: string;
}

/** Every export of src/index.ts and every public property reachable from one, with its doc text. */
function listPublicSurface(): Documented[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  const program = ts.createProgram({ rootNames: [join(SRC, 'index.ts')], options: { ...config!.options, noEmit: true } });
  const checker = program.getTypeChecker();
  // Keyed by declaration: a property reached by several paths (zod's inferred types, Omit<>) is listed once.
  const found = new Map<ts.Node, Documented>();
  const seen = new Set<ts.Type | string>();
  const ours = (node: ts.Node) => node.getSourceFile().fileName.startsWith(SRC);
  const docOf = (symbol: ts.Symbol) =>
    ts.displayPartsToString(symbol.getDocumentationComment(checker)) +
    symbol
      .getJsDocTags(checker)
      .map((tag) => ` @${tag.name} ${ts.displayPartsToString(tag.text)}`)
      .join('');
  const note = (symbol: ts.Symbol, node: ts.Node, name: string) => {
    if (!found.has(node)) found.set(node, { name, file: relative(ROOT, node.getSourceFile().fileName), doc: docOf(symbol).trim() });
  };
  // Private members and `@internal` ones (stripped from the declarations) are not the API.
  const hidden = (symbol: ts.Symbol, node: ts.Declaration) =>
    (ts.getCombinedModifierFlags(node) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 ||
    ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) && ts.isPrivateIdentifier(node.name)) ||
    symbol.getJsDocTags(checker).some((tag) => tag.name === 'internal');

  // Named where it is declared (`ImportSettings.file`, `BreakerState.kind`, `clientSchema.id`),
  // whichever path reached it: the interface, class, type or variable around it, and the
  // properties in between.
  const declaredOwner = (node: ts.Node): string | undefined => {
    const names: string[] = [];
    for (let at = node.parent; at !== undefined; at = at.parent) {
      if ((ts.isPropertySignature(at) || ts.isPropertyAssignment(at) || ts.isPropertyDeclaration(at)) && ts.isIdentifier(at.name)) {
        names.unshift(at.name.text);
      }
      const container =
        ts.isInterfaceDeclaration(at) || ts.isClassDeclaration(at) || ts.isTypeAliasDeclaration(at) || ts.isVariableDeclaration(at)
          ? at.name
          : undefined;
      if (container !== undefined && ts.isIdentifier(container)) return [container.text, ...names].join('.');
    }
    return undefined;
  };
  const visitSignature = (signature: ts.Signature, path: string) => {
    for (const parameter of signature.getParameters()) {
      const node = parameter.valueDeclaration;
      if (node) visitType(checker.getTypeOfSymbolAtLocation(parameter, node), path);
    }
    visitType(signature.getReturnType(), path);
  };
  const visitType = (type: ts.Type, path: string): void => {
    if (type.isUnionOrIntersection()) {
      for (const part of type.types) visitType(part, path);
      return;
    }
    for (const argument of type.aliasTypeArguments ?? []) visitType(argument, path);
    if (!(type.flags & ts.TypeFlags.Object)) return;
    // Promise<Summary>, AsyncIterable<Client>, Record<Outcome, number>…: what they hold.
    if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) {
      for (const argument of checker.getTypeArguments(type as ts.TypeReference)) visitType(argument, path);
    }
    for (const signature of type.getCallSignatures()) visitSignature(signature, path);
    // A type of ours by name; or one whose properties are ours, as zod infers `Client` from its schema.
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const named = symbol?.getDeclarations()?.some(ours) === true && !symbol.getName().startsWith('__');
    const base = named ? symbol.getName() : path;
    const key = named ? base : type;
    if (seen.has(key)) return;
    seen.add(key);
    for (const property of type.getProperties()) {
      const node = property.valueDeclaration ?? property.getDeclarations()?.[0];
      if (!node || !ours(node) || hidden(property, node)) continue;
      const name = `${declaredOwner(node) ?? base}.${property.getName()}`;
      note(property, node, name);
      visitType(checker.getTypeOfSymbolAtLocation(property, node), name);
    }
  };

  const index = checker.getSymbolAtLocation(program.getSourceFile(join(SRC, 'index.ts'))!)!;
  for (const exported of checker.getExportsOfModule(index)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const name = exported.getName();
    note(symbol, symbol.getDeclarations()![0]!, name);
    if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class)) {
      visitType(checker.getDeclaredTypeOfSymbol(symbol), name);
    }
    if (symbol.flags & ts.SymbolFlags.Function) visitType(checker.getTypeOfSymbol(symbol), name);
    if (symbol.flags & ts.SymbolFlags.Class) {
      for (const signature of checker.getTypeOfSymbol(symbol).getConstructSignatures()) visitSignature(signature, name);
    }
  }
  return [...found.values()].sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name));
}

describe('the doc comments a developer hovers', () => {
  let surface: Documented[];
  beforeAll(() => {
    surface = listPublicSurface();
  }, 120_000);

  it('finds the exports and the options and summaries inside them', () => {
    // A walk that found nothing would pass the checks below.
    expect(surface.map((entry) => entry.name)).toEqual(
      expect.arrayContaining([
        'importClients',
        'ImportClientsOptions',
        'ImportSettings.file',
        'ImportSummary.counts',
        'ExportSettings.status',
        'ExportSummary.rows',
        'ServiceClientOptions.baseUrl',
        'SandboxOptions.seed',
        'VerifyMigrationOptions.service',
        'ProgressSnapshot.done',
        'clientSchema.id',
      ]),
    );
  });

  it('every export and every property reachable from one has a doc comment', () => {
    const missing = new Set(surface.filter((entry) => entry.doc === '').map((entry) => `${entry.file}: ${entry.name}`));
    expect([...missing]).toEqual([]);
  });

  it('no doc comment names a source file, which the package does not ship', () => {
    const pointers = surface.flatMap((entry) =>
      [...entry.doc.matchAll(/\b[\w-]+\.(?:c|m)?ts\b/g)].map((match) => `${entry.file}: ${entry.name} → ${match[0]}`),
    );
    expect(pointers).toEqual([]);
  });
});
