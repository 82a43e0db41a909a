// Types of bundle.js (plain JavaScript, so that cli/bin/mooring.js starts without a loader).
export declare const BUNDLE_DIR: string;
export declare const BUNDLE: string;
export declare const INPUTS: string;
export declare function bundleIsFresh(): boolean;
export declare function bundleKubeClient(outfile: string): Promise<void>;
export declare function buildBundle(): Promise<void>;
