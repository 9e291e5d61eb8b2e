/**
 * The docs' manifests and shell lines as a cluster, a CI service and a shell would read them:
 * every YAML block of the docs parses (Kubernetes' YAML 1.1 for manifests, YAML 1.2 for a
 * workflow) and fits the schema of its kind — the Kubernetes API's `batch/v1` Job and CronJob
 * and `v1` ConfigMap (a trimmed copy in test/fixtures/schemas), plus the rules the API server
 * adds (podFailurePolicy needs restartPolicy Never, names a container…), or GitHub Actions'
 * workflow keys; every shell line of the docs (sh blocks, crontab lines, console commands, a
 * container's `sh -c`, a workflow's `run:`) passes `sh -n` (bash -n for a workflow step).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { ROOT } from './helpers.js';
import { checkSchema, readSchema } from './schema.helpers.js';

interface Block {
  /** `docs/scale-out.md:57`: where the block's first line is. */
  where: string;
  lang: string;
  text: string;
}

const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Every fenced block of the docs, with its language and where it starts. */
function fencedBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of FILES) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S*)$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((line, j) => j > i && line === '```');
      blocks.push({ where: `${file}:${i + 2}`, lang: open[1]!, text: lines.slice(i + 1, end).join('\n') });
      i = end;
    }
  }
  return blocks;
}

const BLOCKS = fencedBlocks();
const YAML_BLOCKS = BLOCKS.filter((block) => block.lang === 'yaml');
const KUBERNETES = readSchema('kubernetes.schema.json');
const WORKFLOW = readSchema('github-workflow.schema.json');

/** A block as its reader parses it: Kubernetes' YAML 1.1 (`0400` is octal) for a manifest, YAML 1.2 for a workflow (`on` is a key, not true). */
function parseBlock(text: string): { value: unknown; errors: string[] } {
  const manifest = /^apiVersion:/m.test(text);
  const document = parseDocument(text, { version: manifest ? '1.1' : '1.2', uniqueKeys: true, prettyErrors: true });
  return { value: document.toJS(), errors: [...document.errors, ...document.warnings].map((error) => error.message) };
}

type Manifest = Record<string, unknown>;

/** The schema problems of a parsed block, by its kind; a block of no known kind is one. */
function schemaProblems(value: unknown): string[] {
  const object = (value ?? {}) as Manifest;
  if (typeof object.kind === 'string') {
    const definition = KUBERNETES.definitions[object.kind];
    if (definition === undefined) return [`no schema for kind ${object.kind}: add it to test/fixtures/schemas/kubernetes.schema.json`];
    return [...checkSchema(KUBERNETES, definition, value), ...apiServerRules(object)];
  }
  if ('jobs' in object) return checkSchema(WORKFLOW, WORKFLOW.definitions.Workflow!, value);
  return ['neither a Kubernetes object (apiVersion, kind) nor a workflow (jobs): no schema to check it against'];
}

const at = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((inner, key) => (inner as Record<string, unknown> | undefined)?.[key], value);

/** What the API server refuses beyond the schema, for a Job's spec (a CronJob's jobTemplate too). */
function apiServerRules(manifest: Manifest): string[] {
  const spec = manifest.kind === 'Job' ? at(manifest, 'spec') : manifest.kind === 'CronJob' ? at(manifest, 'spec', 'jobTemplate', 'spec') : undefined;
  if (spec === undefined) return [];
  const problems: string[] = [];
  const pod = at(spec, 'template', 'spec') as Manifest | undefined;
  const containers = ((pod?.containers ?? []) as Manifest[]).map((container) => container.name);
  const restart = pod?.restartPolicy;
  if (restart !== 'Never' && restart !== 'OnFailure') problems.push(`a Job's pods need restartPolicy Never or OnFailure (got ${String(restart)})`);
  const rules = (at(spec, 'podFailurePolicy', 'rules') ?? []) as Manifest[];
  if (rules.length > 0 && restart !== 'Never') problems.push('podFailurePolicy needs restartPolicy: Never');
  for (const rule of rules) {
    const codes = rule.onExitCodes as Manifest | undefined;
    if ((codes === undefined) === (rule.onPodConditions === undefined)) problems.push('a podFailurePolicy rule has onExitCodes or onPodConditions, not both');
    if (codes?.containerName !== undefined && !containers.includes(codes.containerName)) problems.push(`onExitCodes.containerName ${String(codes.containerName)} names no container`);
    for (const code of (codes?.values ?? []) as number[]) if (!(code >= 1 && code <= 255)) problems.push(`exit code ${code} is not 1 to 255`);
    if (rule.action === 'FailIndex' && at(spec, 'backoffLimitPerIndex') === undefined) problems.push('FailIndex needs backoffLimitPerIndex');
  }
  if (at(spec, 'completionMode') === 'Indexed' && at(spec, 'completions') === undefined) problems.push('an Indexed Job needs completions');
  for (const volume of (pod?.volumes ?? []) as Manifest[]) {
    const source = (volume.secret ?? volume.configMap) as Manifest | undefined;
    const modes = [source?.defaultMode, ...((source?.items ?? []) as Manifest[]).map((item) => item.mode)].filter((mode) => mode !== undefined);
    for (const mode of modes as number[]) if (!(mode >= 0 && mode <= 0o777)) problems.push(`volume ${String(volume.name)}: mode ${mode} is not 0 to 0777`);
  }
  return problems;
}

describe('every YAML block of the docs parses and fits its kind', () => {
  it('finds the manifests and the workflow', () => {
    const kinds = YAML_BLOCKS.map((block) => /^kind: (\w+)/m.exec(block.text)?.[1] ?? ('jobs' in (parseBlock(block.text).value as object) ? 'workflow' : '?'));
    expect(kinds.sort()).toEqual(['ConfigMap', 'CronJob', 'Job', 'workflow']);
  });

  it.each(YAML_BLOCKS.map((block) => [block.where, block] as const))('%s', (_where, block) => {
    const { value, errors } = parseBlock(block.text);
    expect(errors).toEqual([]);
    expect(schemaProblems(value)).toEqual([]);
  });

  it('the check refuses what a cluster or CI would: a misspelt field, a wrong enum, a rule the API server adds, a flow mapping holding ${{ }}', () => {
    const job = YAML_BLOCKS.find((block) => block.text.includes('kind: Job'))!.text;
    expect(schemaProblems(parseBlock(job.replace('podFailurePolicy:', 'podFailurePolicies:')).value)).toContain('spec.podFailurePolicies: unknown field');
    expect(schemaProblems(parseBlock(job.replace('action: FailJob', 'action: Fail')).value)[0]).toMatch(/^spec\.podFailurePolicy\.rules\[0\]\.action: "Fail", expected one of/);
    expect(schemaProblems(parseBlock(job.replace('restartPolicy: Never', 'restartPolicy: OnFailure')).value)).toContain('podFailurePolicy needs restartPolicy: Never');
    expect(schemaProblems(parseBlock(job.replace('containerName: import', 'containerName: importer')).value)).toContain('onExitCodes.containerName importer names no container');
    expect(parseBlock('on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        with: { key: s-${{ github.run_id }} }\n').errors).not.toEqual([]);
    // YAML 1.1, as Kubernetes reads a manifest: a Secret's mode 0400 is octal.
    const cronJob = parseBlock(YAML_BLOCKS.find((block) => block.text.includes('kind: CronJob'))!.text).value;
    const volumes = at(cronJob, 'spec', 'jobTemplate', 'spec', 'template', 'spec', 'volumes') as Manifest[];
    expect(at(volumes.find((volume) => volume.secret !== undefined), 'secret', 'defaultMode')).toBe(0o400);
  });
});

interface ShellLine {
  where: string;
  text: string;
  /** The shell that runs it: sh (cron, a container's sh -c, a terminal) or bash (a workflow step). */
  shell: 'sh' | 'bash';
}

/** A crontab line's command: the five schedule fields dropped. */
const cronCommand = (line: string): string | undefined => /^(?:[\d*,/-]+\s+){5}(.+)$/.exec(line)?.[1];

/** Every shell line of the docs, where it is and which shell runs it. */
function shellLines(): ShellLine[] {
  const lines: ShellLine[] = [];
  for (const block of BLOCKS) {
    if (block.lang === 'sh') lines.push({ where: block.where, text: block.text, shell: 'sh' });
    if (block.lang === 'cron') {
      for (const line of block.text.split('\n')) {
        const command = cronCommand(line);
        if (command !== undefined) lines.push({ where: block.where, text: command, shell: 'sh' });
      }
    }
    if (block.lang === 'console') {
      for (const line of block.text.split('\n')) if (line.startsWith('$ ')) lines.push({ where: block.where, text: line.slice(2), shell: 'sh' });
    }
    if (block.lang === 'yaml') lines.push(...yamlShellLines(block));
  }
  return lines;
}

/** A container whose command is `sh -c` (its script is the first arg), a workflow's `run:` steps. */
function yamlShellLines(block: Block): ShellLine[] {
  const { value } = parseBlock(block.text);
  const found: ShellLine[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const object = node as Manifest;
    const command = object.command as string[] | undefined;
    if (Array.isArray(command) && /sh$/.test(command[0] ?? '') && command.includes('-c')) {
      const script = command[command.indexOf('-c') + 1] ?? (object.args as string[] | undefined)?.[0];
      if (script !== undefined) found.push({ where: block.where, text: script, shell: 'sh' });
    }
    if (typeof object.run === 'string') found.push({ where: block.where, text: object.run, shell: 'bash' });
    Object.values(object).forEach(visit);
  };
  visit(value);
  return found;
}

const SHELL_LINES = shellLines();

describe('every shell line of the docs passes sh -n', () => {
  it('finds them: sh blocks, crontab lines, console commands, workflow steps', () => {
    expect(SHELL_LINES.filter((line) => line.where.startsWith('docs/scale-out.md')).length).toBeGreaterThanOrEqual(4);
    expect(SHELL_LINES.filter((line) => line.where.startsWith('docs/scheduled-reports.md') && line.shell === 'sh').length).toBeGreaterThanOrEqual(4);
    expect(SHELL_LINES.filter((line) => line.shell === 'bash').length).toBeGreaterThanOrEqual(2);
  });

  it.each(SHELL_LINES.map((line, i) => [`${line.where} #${i}`, line] as const))('%s', (_where, line) => {
    const checked = spawnSync(line.shell === 'bash' ? 'bash' : 'sh', ['-n'], { input: `${line.text}\n`, encoding: 'utf8' });
    expect(checked.stderr, line.text).toBe('');
    expect(checked.status, line.text).toBe(0);
  });

  it('sh -n refuses a line that does not parse (the check is not empty)', () => {
    expect(spawnSync('sh', ['-n'], { input: 'for host in a b; do echo "$host"\n', encoding: 'utf8' }).status).not.toBe(0);
  });
});
