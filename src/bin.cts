#!/usr/bin/env node
/**
 * The command's entry. CommonJS on purpose: it must run before anything uses libuv's thread
 * pool, which loading an ES module already has (the pool's size is fixed when it starts).
 * Then the ES modules load and main() runs.
 */
import os = require('node:os');
import v8 = require('node:v8');

// Every Create Client is an RSA-4096 signature in the thread pool, which has 4 threads on any
// machine: one per core signs on every core (8 on 8 cores, not 4) and, on 2 cores, leaves the
// event loop its share instead of time-slicing 4 signatures over 2 cores (C=16 with 50 ms of
// latency: +8%). A size set by the user wins.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(2, os.availableParallelism()));

// V8's allocation-site pretenuring guesses, from a few early garbage collections, that rows
// (alive for one batch) live long, and then allocates every later row in the old generation:
// one large validate in three collected 15 times more and held 50 MB more. ccs-bulk streams:
// nothing it allocates per row outlives its batch. The flag is read when V8 collects, so it
// holds when set before any of our code runs. (Library users keep V8's default.)
v8.setFlagsFromString('--no-allocation-site-pretenuring');

void import('./main.js').then(({ main }) => main(process.argv.slice(2)));
