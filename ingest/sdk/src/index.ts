/** ESM entry: `import { init } from '…/friction.mjs'`. Importing touches no browser global (SSR-safe). */
import { conversion, flush, identify, init, optIn, optOut, stats, track, version } from './api.ts';

export { conversion, flush, identify, init, optIn, optOut, stats, track, version };
export default { init, track, conversion, identify, flush, stats, version, optOut, optIn };
