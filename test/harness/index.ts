export {
  kubectl,
  type PrivateControlPlane,
  privateControlPlane,
  type TestCluster,
  type TestClusterOptions,
  testCluster,
  testNamespace,
  uniqueName,
  workloadsLocation,
} from './cluster.ts';
export { eventually } from './eventually.ts';
export { type FileChanges, GitServer, type GitServerAuth, git, TestRepo } from './git-server.ts';
export { type InProcessOperators, startInProcessOperators } from './in-process-operators.ts';
export { TestRegistry, type TestRegistryOptions } from './registry.ts';
export { RegistryTokenServer, type TokenServerUsers } from './registry-token-server.ts';
export { SshGitServer } from './ssh-git-server.ts';
export { type ObjectWithConditions, requestReconcileAndWait, waitForReady } from './wait-for-ready.ts';
