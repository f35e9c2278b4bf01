import anyTest, { type TestFn } from 'ava';
import { startTestStack } from '../testing/stack.ts';
import { exploreConformance } from '../testing/explore-conformance.ts';

// The Explorer's conformance suite on the embedded default (PGlite + TimescaleDB): the same SQL, the same answers.
exploreConformance(anyTest as TestFn<any>, () => startTestStack({ embedded: true, processor: false }));
