/** The environment the kernel sees from tugcode: TUGCODE_KERNEL_X is honoured as TUG_X when TUG_X is unset (docs/git.md §8). */
export function kernelEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('TUGCODE_KERNEL_')) {
      const name = 'TUG_' + k.slice('TUGCODE_KERNEL_'.length);
      if (out[name] === undefined) out[name] = v;
    }
  }
  return out;
}
