import anyTest, { type TestFn } from 'ava';
import { startTestStack } from '../testing/stack.ts';
import { exploreConformance } from '../testing/explore-conformance.ts';

// The Explorer's conformance suite on the PostgreSQL server.
exploreConformance(anyTest as TestFn<any>, () => startTestStack({ processor: false }));
