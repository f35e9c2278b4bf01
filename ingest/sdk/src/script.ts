/**
 * Script-tag entry (IIFE, global `Friction`). With `data-key` on the script element it starts
 * itself: `<script src="https://ingest.example.com/v1/sdk.js" data-key="svc_pub_…"></script>`.
 * `data-endpoint` defaults to the script's own origin (ingest serves the file); `data-environment`,
 * `data-app-version`, `data-sample-rate` and `data-config` (JSON of any other init option) are optional.
 */
import { conversion, flush, identify, init, optIn, optOut, stats, track, version } from './api.ts';
import { guard } from './guard.ts';
import type { FrictionOptions } from './types.ts';

const w = window as unknown as { Friction?: object };

guard(() => {
  // A second copy of the tag would double every signal: the first one stays in charge.
  if (w.Friction) return;
  // Assigned by hand rather than through esbuild's globalName, whose export shim costs bytes.
  w.Friction = { init, track, conversion, identify, flush, stats, version, optOut, optIn };
  const s = document.currentScript;
  if (!(s instanceof HTMLScriptElement) || !s.dataset.key) return;
  const d = s.dataset;
  // The attributes are defaults: an option also given in data-config wins.
  const o = {
    environment: d.environment,
    appVersion: d.appVersion,
    sampleRate: d.sampleRate && +d.sampleRate,
    ...(d.config ? (JSON.parse(d.config) as Partial<FrictionOptions>) : {}),
    key: d.key,
    // The src property is the absolute URL, whatever the attribute says.
    endpoint: d.endpoint || new URL(s.src).origin,
  } as FrictionOptions;
  init(o);
})();
