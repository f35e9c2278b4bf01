import { z } from 'zod';
import { ENVIRONMENTS } from '../domain/deploy-verification.ts';

/**
 * The read routes' optional `environment` query parameter: whose results to read. Production and staging are
 * folded apart by the processor (a batch's `context.environment`); any other value is a 400 naming the field.
 */
export const EnvironmentParam = z
  .enum(ENVIRONMENTS)
  .default('production')
  .describe('production (default) or staging: the environment whose scores, issues and elements are read');
