/**
 * verify's own refusals. Each is a usage problem (exit 2): the run cannot say what the
 * migration did without the right results files.
 */
import type { CodeOf } from '../errors.js';

/** A source with no results file: none at the default name or its shards', none given. */
export const NO_RESULTS: CodeOf<'UsageError'> = 'verify_no_results';

/** With several sources, a --results file that names none of them (its sidecar, its name). */
export const RESULTS_UNMATCHED: CodeOf<'UsageError'> = 'verify_results_unmatched';
