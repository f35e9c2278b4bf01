/**
 * Compile-time only (npm run typecheck): the published declarations (friction.d.ts) describe the implementation.
 * Each assignment fails to compile when an export is missing, a parameter's type no longer fits, or an option
 * declared for users is not one the implementation takes.
 */
import type * as Declared from './friction.d.ts';
import * as Impl from './src/index.ts';
import type { FrictionOptions } from './src/types.ts';

export const implementsDeclarations: typeof Declared = Impl;
// Every declared option is an option of the implementation, and the other way round, with compatible types.
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
export const sameOptionNames: SameKeys<Declared.FrictionOptions, FrictionOptions> = true;
export const optionsMatch = (o: Declared.FrictionOptions): FrictionOptions => o;
export const optionsMatchBack = (o: FrictionOptions): Declared.FrictionOptions => o;
