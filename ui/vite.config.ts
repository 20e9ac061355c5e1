// Vite settings of the web UI: React, served under /ui by the API (api/ui.ts), built into ui/dist. In development,
// `npx vite --config ui/vite.config.ts` serves it with hot reload and proxies /api to a running server
// (FLOWPILOT_URL, default http://127.0.0.1:8080).
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/ui/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', chunkSizeWarningLimit: 1500 },
  server: {
    port: 5173,
    proxy: { '/api': { target: process.env.FLOWPILOT_URL ?? 'http://127.0.0.1:8080', changeOrigin: true } },
  },
});
