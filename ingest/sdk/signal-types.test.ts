/** The SDK and the engine agree on the signals: every type the SDK's detectors send has a catalog entry, and no other. */
import test from 'ava';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';
import { SIGNAL_TYPES } from './fixtures/scenarios.ts';

test('the catalog knows every signal type the SDK sends, and only those', (t) => {
  t.deepEqual(SIGNAL_CATALOG.map((d) => d.type).sort(), [...SIGNAL_TYPES].sort());
});
