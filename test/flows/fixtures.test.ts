// Black-box flow fixtures (test/flows/*.yaml, see fixture-suite.ts) end to end through the REST API and the embedded
// controller: real SQLite, real processes, real HTTP.
import { startEmbedded } from '../support/embedded.js';
import { FIXTURE_SECRETS, fixtureSuite } from './fixture-suite.js';

fixtureSuite('embedded', async () => {
  const env = await startEmbedded({ ...FIXTURE_SECRETS, PATH: process.env.PATH });
  return { base: env.base, flushLogs: () => env.stores.logs.flush(), close: () => env.close() };
});
