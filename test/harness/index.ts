export { kubectl, type TestCluster, testCluster, testNamespace, uniqueName } from './cluster.ts';
export { type FileChanges, GitServer, type GitServerAuth, git, TestRepo } from './git-server.ts';
