import { join } from 'node:path';
import { type ControlPlaneLocation, locationAt, repoRoot } from './control-plane.ts';

/** The test suite's own control plane, apart from the demo's `.mooring/control-plane`. */
export function testLocation(): ControlPlaneLocation {
  return locationAt(join(repoRoot, '.mooring/test-control-plane'));
}

/** The plane `testCluster({ workloads: true })` starts: controllers, scheduler and kwok's fake nodes too. */
export function workloadsTestLocation(): ControlPlaneLocation {
  return locationAt(
    process.env.MOORING_WORKLOADS_DIR ?? join(repoRoot, '.mooring/test-control-plane-workloads'),
  );
}
