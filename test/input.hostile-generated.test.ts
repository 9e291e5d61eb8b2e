/**
 * The hostile-input corpus, CSV and file-system cases made at test time (a million blank lines,
 * a 100 MiB line, a sparse gigabyte, a FIFO held open, a 0000 file…): see test/hostile.corpus.ts.
 * A file of their own, so the two halves of the corpus run on both workers.
 */
import { useSandbox } from './helpers.js';
import { hostileCases, testHostileCases } from './hostile.corpus.js';

const ctx = useSandbox();

testHostileCases(ctx, hostileCases((entry) => entry.xlsx !== true && entry.pending === undefined && entry.generate !== undefined));
