/**
 * Where a click landed: the pointer event itself, whose coordinates stay readable after dispatch (clientX/Y in
 * the viewport, pageX/Y in the document). The contract wants integers 0..1000 on each axis, 0,0 top-left.
 */
export type Point = Pick<MouseEvent, 'clientX' | 'clientY' | 'pageX' | 'pageY'>;

/** How far apart two pointer positions are, in CSS px. */
export const distance = (a: Point, b: Point): number => Math.hypot(a.clientX - b.clientX, a.clientY - b.clientY);

export interface Coords {
  x?: number;
  y?: number;
  vx?: number;
  vy?: number;
  px?: number;
  py?: number;
}

/** Scales `v` over `size` to 0..1000; undefined when the size is unknown (zero) or v is not a number. */
export const scale = (v: number, size: number): number | undefined => {
  if (!(size > 0) || !Number.isFinite(v)) return undefined;
  return Math.min(1000, Math.max(0, Math.round((v / size) * 1000)));
};

/** Element-relative (x,y), viewport (vx,vy) and document (px,py) coordinates of a point. */
export const coordsFor = (el: Element, p: Point): Coords => {
  const r = el.getBoundingClientRect();
  const de = document.documentElement;
  // An undefined axis (zero-size element) is left out by JSON.stringify.
  return {
    x: scale(p.clientX - r.left, r.width),
    y: scale(p.clientY - r.top, r.height),
    vx: scale(p.clientX, innerWidth),
    vy: scale(p.clientY, innerHeight),
    px: scale(p.pageX, Math.max(de.scrollWidth, innerWidth)),
    py: scale(p.pageY, Math.max(de.scrollHeight, innerHeight)),
  };
};
