/**
 * Compile-time only (npm run typecheck): the published declarations (friction.d.ts) describe the implementation.
 * The assignment fails to compile when an export is missing or a parameter's type no longer fits. init()'s options
 * need no check of their own: the implementation takes its option types from friction.d.ts (src/types.ts).
 */
import type * as Declared from './friction.d.ts';
import * as Impl from './src/index.ts';

export const implementsDeclarations: typeof Declared = Impl;
