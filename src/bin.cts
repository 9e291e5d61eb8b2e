#!/usr/bin/env node
/**
 * The command's entry. CommonJS on purpose: it must run before anything uses libuv's thread
 * pool, which loading an ES module already has (the pool's size is fixed when it starts).
 * Then the ES modules load and main() runs.
 */
import os = require('node:os');
import v8 = require('node:v8');

// One pool thread per core (at least 2) signs on every core; a size set by the user wins.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(2, os.availableParallelism()));

// Rows live for one batch; V8's pretenuring guess that they live long only grows the old generation.
v8.setFlagsFromString('--no-allocation-site-pretenuring');
// An import allocates fast, so V8 let the heap grow to 4× what is live between full GCs: with
// 1,000 requests in flight that slack was most of the peak RSS. At 1.5× the peak is a third
// lower; the extra full GCs, of a live heap of ~40 MB, are short.
v8.setFlagsFromString('--heap-growing-percent=50');

void import('./main.js').then(({ main }) => main(process.argv.slice(2)));
