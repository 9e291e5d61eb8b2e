import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files (the hostile workbooks, the guide run in bash, the adaptive runs against a
 * rate limit, the reader thread's properties, a bench run): started first, so neither worker is
 * left with one at the end. vitest orders by the last run's durations when it has them; on a
 * fresh checkout it has none and would order by file size, which puts the short bench file last.
 */
const LONG_FIRST = [
  'input.hostile-xlsx',
  'guide',
  'export.prefetch',
  'import.adaptive',
  'input.thread',
  'bench.smoke',
  'import.outage',
  'input.hostile-generated',
];

class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONG_FIRST.findIndex((name) => file.moduleId.endsWith(`/test/${name}.test.ts`));
      return at < 0 ? LONG_FIRST.length : at;
    };
    return sorted.map((file, i) => ({ file, i })).sort((a, b) => rank(a.file) - rank(b.file) || a.i - b.i).map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Heavy fixtures made once per run (key pairs), handed to the files through inject().
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Files run in parallel, each starts its own sandbox on port 0.
    pool: 'forks',
    // One process per worker for all its files, not one per file: loading vitest and our modules
    // anew for each of 89 files cost about a sixth of the suite's CPU. No test changes process
    // state it does not restore (cwd is restored by runCliInProcess, env is passed per run).
    isolate: false,
    // One worker more than cores: a file waiting on a timer, a child process or the network
    // leaves its core to another (on 2 cores: 150 s with 2 workers, 124 s with 3).
    maxWorkers: Math.min(8, availableParallelism() + 1),
    sequence: { sequencer: LongFirst },
  },
});
