/** Where a click landed, as the ingest contract wants it: integers 0..1000 on each axis, 0,0 top-left. */
export interface Point {
  /** Viewport coordinates of the pointer (MouseEvent.clientX/Y). */
  cx: number;
  cy: number;
  /** Document coordinates (MouseEvent.pageX/Y). */
  px: number;
  py: number;
}

export interface Coords {
  x?: number;
  y?: number;
  vx?: number;
  vy?: number;
  px?: number;
  py?: number;
}

/** Scales `v` over `size` to 0..1000; undefined when the size is unknown (zero) or v is not a number. */
export function scale(v: number, size: number): number | undefined {
  if (!(size > 0) || !Number.isFinite(v)) return undefined;
  return Math.min(1000, Math.max(0, Math.round((v / size) * 1000)));
}

/** Element-relative (x,y), viewport (vx,vy) and document (px,py) coordinates of a point. */
export function coordsFor(el: Element, p: Point): Coords {
  const r = el.getBoundingClientRect();
  const de = document.documentElement;
  // An undefined axis (zero-size element) is left out by JSON.stringify.
  return {
    x: scale(p.cx - r.left, r.width),
    y: scale(p.cy - r.top, r.height),
    vx: scale(p.cx, innerWidth),
    vy: scale(p.cy, innerHeight),
    px: scale(p.px, Math.max(de.scrollWidth, innerWidth)),
    py: scale(p.py, Math.max(de.scrollHeight, innerHeight)),
  };
}

export function pointOf(e: MouseEvent): Point {
  return { cx: e.clientX, cy: e.clientY, px: e.pageX, py: e.pageY };
}
