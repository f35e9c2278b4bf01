import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { PagePath } from '../../http/common.schema.ts';

export const SCREENSHOT_DEVICES = ['desktop', 'mobile'] as const;
export type ScreenshotDevice = (typeof SCREENSHOT_DEVICES)[number];

/** Viewports the page is rendered in: a common laptop and a common phone (CSS pixels, scale 1). */
export const VIEWPORTS: Record<ScreenshotDevice, { width: number; height: number; isMobile: boolean }> = {
  desktop: { width: 1280, height: 800, isMobile: false },
  mobile: { width: 390, height: 844, isMobile: true },
};

const Device = z
  .enum(SCREENSHOT_DEVICES)
  .default('desktop')
  .describe('desktop (1280x800) or mobile (390x844); default desktop');

export const ScreenshotQuerySchema = z.object({
  site_id: Uuid(),
  page: PagePath,
  device: Device,
  cached: z.enum(['1']).optional().describe('1: answer only what is stored, never start a capture'),
});

export const ScreenshotImageQuerySchema = z.object({ site_id: Uuid(), page: PagePath, device: Device });

/** Why `screenshot` is null. */
export const SCREENSHOT_REASONS = [
  'disabled',
  'capturing',
  'not_captured',
  'limit_reached',
  'refused',
  'render_failed',
] as const;
export type ScreenshotReason = (typeof SCREENSHOT_REASONS)[number];

/** `/query/page-screenshot`: the stored capture, or null and why. */
export const ScreenshotResponseSchema = z.union([
  z.object({
    screenshot: z.object({
      page: z.string(),
      device: z.string().describe('desktop or mobile'),
      width: z.number().int(),
      height: z.number().int(),
      captured_at: z.iso.datetime(),
      image_url: z.string(),
    }),
  }),
  z.object({ screenshot: z.null(), reason: z.enum(SCREENSHOT_REASONS) }),
]);
