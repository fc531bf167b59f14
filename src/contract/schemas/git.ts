import type { z } from 'zod';

export const gitSchemas: Record<string, z.ZodTypeAny> = {};
