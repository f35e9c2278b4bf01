import { pageParams } from '../../../shared/http/pagination.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { z } from 'zod';
import { ElementSchema } from '../../read-models/elements.schema.ts';

export const ElementListResponseSchema = z.object({ elements: z.array(ElementSchema), total: z.number().int() });

export const ElementsQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  page: z.string().min(1).max(2048).optional(),
  ...pageParams({ max: 500, default: 50 }),
});
