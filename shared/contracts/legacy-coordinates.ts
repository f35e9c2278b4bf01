import { z } from 'zod';

/**
 * The older SDK coordinate form: an offset in CSS pixels plus the size it is measured in, instead of the integers
 * 0..1000 of `x/y`, `vx/vy`, `px/py`. Ingest accepts both and turns the older one into the integer form
 * (`legacyToPermille`), so stored rows and every read route have one form; the API serves fractions 0..1.
 *
 * | older fields                                   | integer field |
 * |------------------------------------------------|---------------|
 * | `offset_x`, `offset_y` / `element_w`, `element_h` | `x`, `y` (element box)  |
 * | `client_x`, `client_y` / `context.viewport.w`, `.h` | `vx`, `vy` (viewport) |
 * | `page_x`, `page_y` / `document_w`, `document_h`   | `px`, `py` (document)  |
 *
 * When an event carries both forms for one pair, the integer form wins.
 */
const Px = z.number().finite().min(0).max(10_000_000);
const Size = z.number().finite().positive().max(10_000_000);

export const LegacyCoordinateFields = {
  offset_x: Px.optional(),
  offset_y: Px.optional(),
  element_w: Size.optional(),
  element_h: Size.optional(),
  client_x: Px.optional(),
  client_y: Px.optional(),
  page_x: Px.optional(),
  page_y: Px.optional(),
  document_w: Size.optional(),
  document_h: Size.optional(),
};

type LegacyFields = { [K in keyof typeof LegacyCoordinateFields]?: number };

/** Each offset needs the size it is measured against (the viewport's comes from the batch context). */
const NEEDS: readonly (readonly [keyof LegacyFields, keyof LegacyFields])[] = [
  ['offset_x', 'element_w'],
  ['offset_y', 'element_h'],
  ['page_x', 'document_w'],
  ['page_y', 'document_h'],
];

/** Refinement: an offset without its size is refused, naming the missing field. */
export function checkLegacyCoordinates(e: LegacyFields, ctx: z.RefinementCtx): void {
  for (const [offset, size] of NEEDS) {
    if (e[offset] !== undefined && e[size] === undefined)
      ctx.addIssue({ code: 'custom', path: [size], message: `is required with ${offset}` });
  }
}

/** offset / size as an integer 0..1000 (an offset past the edge is the edge). */
export const toPermille = (offset: number, size: number): number =>
  Math.min(1000, Math.max(0, Math.round((offset / size) * 1000)));

/**
 * Converts the older fields of `e` in place into `x/y`, `vx/vy`, `px/py` (unless already present) and removes
 * them. The viewport size comes from the batch context; a zero viewport size leaves vx/vy absent.
 */
export function legacyToPermille(
  e: LegacyFields & { x?: number; y?: number; vx?: number; vy?: number; px?: number; py?: number },
  viewport: { w: number; h: number },
): void {
  if (e.x === undefined && e.offset_x !== undefined && e.element_w !== undefined)
    e.x = toPermille(e.offset_x, e.element_w);
  if (e.y === undefined && e.offset_y !== undefined && e.element_h !== undefined)
    e.y = toPermille(e.offset_y, e.element_h);
  if (e.vx === undefined && e.client_x !== undefined && viewport.w > 0) e.vx = toPermille(e.client_x, viewport.w);
  if (e.vy === undefined && e.client_y !== undefined && viewport.h > 0) e.vy = toPermille(e.client_y, viewport.h);
  if (e.px === undefined && e.page_x !== undefined && e.document_w !== undefined)
    e.px = toPermille(e.page_x, e.document_w);
  if (e.py === undefined && e.page_y !== undefined && e.document_h !== undefined)
    e.py = toPermille(e.page_y, e.document_h);
  for (const k of Object.keys(LegacyCoordinateFields) as (keyof LegacyFields)[]) delete e[k];
}
