// Types of scripts/build.mjs for the TypeScript callers (the test setup).
export function buildDist(outDir?: string): Promise<{ outDir: string; files: number }>;
