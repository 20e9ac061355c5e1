// The embedded controller's public surface.
export { Controller, startController, type ControllerOptions } from './controller.js';
export { secretFromEnv } from './secrets.js';
