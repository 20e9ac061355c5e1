// Types of scripts/build-ui.mjs for the TypeScript callers (the UI test harness).
export function buildUi(): Promise<{ outDir: string; files: number; ms: number }>;
