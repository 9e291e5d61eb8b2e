/**
 * The hostile-input corpus, CSV and file-system cases kept in the repository: see
 * test/hostile.corpus.ts. (The ones made at test time: input.hostile-generated.test.ts.)
 */
import { expect, it } from 'vitest';
import { useSandbox } from './helpers.js';
import { hostileCases, testHostileCases } from './hostile.corpus.js';

const ctx = useSandbox();
const cases = hostileCases((entry) => entry.xlsx !== true && entry.pending === undefined);

it('the corpus holds at least 30 files, each with its exit code and message', () => {
  expect(cases.length).toBeGreaterThanOrEqual(30);
  for (const entry of cases) expect(entry.message.length).toBeGreaterThan(0);
});

testHostileCases(ctx, cases.filter((entry) => entry.generate === undefined));
