// The controller's public surface (embedded and cluster mode share it; cluster mode brings its own launcher).
export { Controller, startController, type ControllerOptions } from './controller.js';
export { LocalLauncher, type Launcher, type Report } from './launcher.js';
export { runAttempt, type AttemptDeps } from './attempt.js';
export { createSecretRenderer, secretFromEnv, type SecretRenderer } from './secrets.js';
