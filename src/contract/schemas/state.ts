import type { z } from 'zod';

export const stateSchemas: Record<string, z.ZodTypeAny> = {};
