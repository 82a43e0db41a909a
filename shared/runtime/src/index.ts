export * from './api-error.ts';
export * from './https-transport.ts';
export * from './kube-client.ts';
export * from './kube-object.ts';
export * from './rest-mapper.ts';
export * from './token-bucket.ts';
export type * from './transport.ts';
