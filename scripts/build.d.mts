// Types of scripts/build.mjs for the TypeScript callers (the test setup).
export function buildDist(outDir?: string, options?: { bundle?: boolean }): Promise<{ outDir: string; files: number }>;
