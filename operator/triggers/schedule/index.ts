// The Schedule trigger: pure cron arithmetic and decisions (safe to import from the API) and the scheduler component.
export * from './cron.js';
export * from './decide.js';
