import { join } from 'node:path';
import { type ControlPlaneLocation, locationAt, repoRoot } from './control-plane.ts';

/** The test suite's own control plane, apart from the demo's `.mooring/control-plane`. */
export function testLocation(): ControlPlaneLocation {
  return locationAt(join(repoRoot, '.mooring/test-control-plane'));
}
