#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';

// V8's allocation-site pretenuring guesses, from a few early garbage collections, that rows
// (alive for one batch) live long, and then allocates every later row in the old generation:
// one run in three collected 15 times more and held 50 MB more. ccs-bulk streams, so nothing
// it allocates per row lives long. The flag is read at collection time; set before any of our
// code runs. (Library users keep V8's default.)
setFlagsFromString('--no-allocation-site-pretenuring');

const { main } = await import('./main.js');
void main(process.argv.slice(2));
