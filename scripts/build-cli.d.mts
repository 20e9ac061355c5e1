// Types of scripts/build-cli.mjs for the TypeScript callers (the test setup, test/cli, the bench).
export const CLI_DIST: string;
export function currentBuild(dir?: string): string | undefined;
export function buildCli(outDir?: string): Promise<{ outDir: string; files: number; inputs: number; ms: number }>;
