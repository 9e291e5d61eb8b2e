/**
 * Hostile workbooks (zip bombs, a gigabyte of shared strings) and the corpus cases that wait
 * on a reader change (each names it under `pending` in the manifest): see test/hostile.corpus.ts.
 */
import { useSandbox } from './helpers.js';
import { hostileCases, testHostileCases } from './hostile.corpus.js';

const ctx = useSandbox();

testHostileCases(ctx, hostileCases((entry) => entry.xlsx === true || entry.pending !== undefined), 120_000);
