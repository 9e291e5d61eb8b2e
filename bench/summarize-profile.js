// Top self-time functions of a V8 CPU profile, and the share of ours vs libraries vs Node.
// Run: node bench/summarize-profile.js FILE.cpuprofile [FILE…] [top=25]  (one summary per file)
// Make one: node --cpu-prof --cpu-prof-dir=DIR dist/bin.cjs validate FILE --results R --quiet
// (or node bench/run.js --only NAME --cpu-prof DIR, which profiles every ccs-bulk child).
import { readFileSync } from 'node:fs';

/** Where a frame's code lives: ours (dist/ → src/), a package, Node itself, or V8's own. */
export function origin(url, functionName) {
  if (url === '') return functionName.startsWith('(') ? functionName : 'v8/native';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node internals';
  const ours = /\/dist\/(.+)\.js$/.exec(url);
  if (ours) return `ours: src/${ours[1]}.ts`;
  return url;
}

/**
 * @param {{nodes: {id: number, callFrame: {functionName: string, url: string, lineNumber: number},
 *   hitCount?: number}[], samples: number[], timeDeltas: number[]}} profile
 */
export function summarize(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  // timeDeltas[i] is the time since the previous sample: charge it to sample i's frame.
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const functions = new Map();
  const origins = new Map();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const where = origin(url, functionName);
    const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}` : ''}`;
    functions.set(name, { us: (functions.get(name)?.us ?? 0) + us, where });
    const group = where.startsWith('ours') ? 'ours' : where;
    origins.set(group, (origins.get(group) ?? 0) + us);
    totalUs += us;
  }
  const sorted = (map, value) => [...map].sort((a, b) => value(b[1]) - value(a[1]));
  return {
    totalUs,
    functions: sorted(functions, (f) => f.us).map(([name, f]) => ({ name, ...f, share: f.us / totalUs })),
    origins: sorted(origins, (us) => us).map(([name, us]) => ({ name, us, share: us / totalUs })),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Several files: one summary each (a run with a worker thread writes one profile per thread).
  const args = process.argv.slice(2);
  const top = args.length > 1 && /^\d+$/.test(args.at(-1)) ? Number(args.pop()) : 25;
  if (args.length === 0) {
    process.stderr.write('usage: node bench/summarize-profile.js FILE.cpuprofile [FILE…] [top]\n');
    process.exit(2);
  }
  const pct = (share) => `${(share * 100).toFixed(1).padStart(5)}%`;
  for (const file of args) {
    const summary = summarize(JSON.parse(readFileSync(file, 'utf8')));
    if (args.length > 1) console.log(`== ${file}`);
    console.log(`${(summary.totalUs / 1e6).toFixed(2)} s sampled. By origin:`);
    for (const o of summary.origins.slice(0, 12)) console.log(`  ${pct(o.share)}  ${o.name}`);
    console.log(`Top ${top} functions by self time:`);
    for (const f of summary.functions.slice(0, top)) console.log(`  ${pct(f.share)}  ${f.name}`);
  }
}
