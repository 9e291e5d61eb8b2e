/**
 * verify's own refusals. Each is a usage problem (exit 2): the run cannot say what the
 * migration did without the right results files. They use the generic code until errors.ts
 * lists these two by name (`verify_no_results`, `verify_results_unmatched`): one line each here.
 */
import type { CodeOf } from '../errors.js';

/** A source with no results file: none at the default name or its shards', none given. */
export const NO_RESULTS: CodeOf<'UsageError'> = 'bad_option';

/** With several sources, a --results file that names none of them (its sidecar, its name). */
export const RESULTS_UNMATCHED: CodeOf<'UsageError'> = 'bad_option';
