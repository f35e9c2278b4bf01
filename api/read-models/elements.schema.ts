import { z } from 'zod';
import { Timestamp } from '../http/common.schema.ts';

const SignalCounts = z.record(z.string(), z.number()).describe('signals by type');

/** An element with friction, as `/query/elements` answers it. */
export const ElementSchema = z
  .object({
    page: z.string(),
    selector: z.string(),
    label: z.string().nullable(),
    signals: SignalCounts,
    signal_count: z.number().int(),
    friction_score: z.number().describe('one decimal'),
    dominant_signal: z.string().nullable(),
    affected_users: z.number().int(),
    recommendation: z.string().nullable(),
    last_signal_at: Timestamp,
  })
  .meta({ id: 'Element' });

/** `/query/page`'s `elements[]`: the element without its page and per-user fields. */
export const PageElementSchema = ElementSchema.pick({
  selector: true,
  label: true,
  signals: true,
  friction_score: true,
  signal_count: true,
  dominant_signal: true,
}).meta({ id: 'PageElement' });
