export * from './artifact-server.ts';
export * from './digest.ts';
export * from './errors.ts';
export * from './extract.ts';
export * from './fetch.ts';
export * from './limits.ts';
export * from './pack.ts';
export * from './storage.ts';
