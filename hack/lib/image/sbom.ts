// The image's SBOM in SPDX 2.3 JSON: every Debian package from the lock, the Node binary, and every
// npm package whose code the bundles hold (from esbuild's list of inputs, at the versions
// package-lock.json installed). Everything in it comes from the build's inputs, so it is as
// reproducible as the image.
import type { BundledPackage } from '../bundle-operators.ts';
import type { LockedPackage } from './debian-packages.ts';
import { NODE_INTEGRITY, NODE_PACKAGE, NODE_VERSION } from './node-binary.ts';

export interface SbomInput {
  version: string;
  revision: string;
  created: string;
  debian: LockedPackage[];
  npm: BundledPackage[];
}

interface SpdxPackage {
  SPDXID: string;
  name: string;
  versionInfo: string;
  downloadLocation: string;
  licenseDeclared: string;
  supplier?: string;
  checksums?: { algorithm: string; checksumValue: string }[];
  externalRefs: { referenceCategory: string; referenceType: string; referenceLocator: string }[];
}

const purl = (locator: string): SpdxPackage['externalRefs'][number] => ({
  referenceCategory: 'PACKAGE-MANAGER',
  referenceType: 'purl',
  referenceLocator: locator,
});
const spdxId = (kind: string, name: string): string =>
  `SPDXRef-${kind}-${name.replace(/[^A-Za-z0-9.-]/g, '-')}`;

/** The SPDX document as formatted JSON text. */
export function spdxDocument(input: SbomInput): string {
  const root: SpdxPackage = {
    SPDXID: 'SPDXRef-mooring',
    name: 'mooring',
    versionInfo: input.version,
    downloadLocation: `git+https://github.com/mooring-dev/mooring@${input.revision}`,
    licenseDeclared: 'NOASSERTION',
    externalRefs: [purl(`pkg:oci/mooring@${input.version}?repository_url=ghcr.io/mooring-dev/mooring`)],
  };
  const debian = input.debian.map(
    (p): SpdxPackage => ({
      SPDXID: spdxId('deb', p.name),
      name: p.name,
      versionInfo: p.version,
      supplier: 'Organization: Debian',
      downloadLocation: `https://deb.debian.org/debian/${p.filename}`,
      licenseDeclared: 'NOASSERTION',
      checksums: [{ algorithm: 'SHA256', checksumValue: p.sha256 }],
      externalRefs: [
        purl(
          `pkg:deb/debian/${p.name}@${encodeURIComponent(p.version)}?arch=${p.architecture}&distro=debian-12${p.source !== p.name ? `&upstream=${p.source}` : ''}`,
        ),
      ],
    }),
  );
  const node: SpdxPackage = {
    SPDXID: 'SPDXRef-node',
    name: NODE_PACKAGE,
    versionInfo: NODE_VERSION,
    downloadLocation: `https://registry.npmjs.org/${NODE_PACKAGE}/-/${NODE_PACKAGE}-${NODE_VERSION}.tgz`,
    licenseDeclared: 'MIT',
    checksums: [
      { algorithm: 'SHA512', checksumValue: Buffer.from(NODE_INTEGRITY.slice(7), 'base64').toString('hex') },
    ],
    externalRefs: [purl(`pkg:npm/${NODE_PACKAGE}@${NODE_VERSION}`), purl(`pkg:generic/node@${NODE_VERSION}`)],
  };
  const npm = input.npm.map(
    (p): SpdxPackage => ({
      SPDXID: spdxId('npm', `${p.name}-${p.version}`),
      name: p.name,
      versionInfo: p.version,
      downloadLocation: `https://registry.npmjs.org/${p.name}/-/${p.name.split('/').pop()}-${p.version}.tgz`,
      licenseDeclared: p.license && /^[A-Za-z0-9.+() -]+$/.test(p.license) ? p.license : 'NOASSERTION',
      externalRefs: [purl(`pkg:npm/${p.name.replace('@', '%40')}@${p.version}`)],
    }),
  );
  const packages = [root, node, ...debian, ...npm];
  const doc = {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `mooring-${input.version}`,
    documentNamespace: `https://github.com/mooring-dev/mooring/spdx/${input.version}/${input.revision}`,
    creationInfo: { created: input.created, creators: ['Tool: mooring hack/image'] },
    packages,
    relationships: [
      { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: root.SPDXID },
      ...packages.slice(1).map((p) => ({
        spdxElementId: root.SPDXID,
        relationshipType: 'CONTAINS',
        relatedSpdxElement: p.SPDXID,
      })),
    ],
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
