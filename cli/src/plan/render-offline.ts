// One Kustomization of a checked-out tree rendered as the operator renders it (the same step list:
// build with the object's overrides, decryption, substitution, owner labels), with only what is
// known offline: postBuild.substitute values (substituteFrom's are the cluster's, so their
// variables stay as `${name}`), and SOPS files decrypted only with an age key in SOPS_AGE_KEY or
// SOPS_AGE_KEY_FILE, else compared as ciphertext.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kustomization } from '@mooring/api';
import {
  buildStep,
  decrypt,
  defaultHelmRenderLimits,
  folderSource,
  label,
  overridesOf,
  type RenderSpec,
  type RenderStep,
  runRender,
  substitute,
} from '@mooring/kustomize-operator/render';
import { isSopsEncrypted } from '@mooring/kustomize-operator/sops';
import type { KubeObject } from '@mooring/runtime';
import { REPO_ROOT } from '../cli-paths.ts';
import { specFolder } from './kustomization-inputs.ts';

export interface OfflineRender {
  objects?: KubeObject[];
  /** Why the render failed, in the operator's words (the message its Ready condition would carry). */
  error?: string;
  /** What the render could not know offline, said once per Kustomization. */
  notes: string[];
}

/** Cluster-side inputs the CLI read when it has a cluster (`--kubeconfig`); offline they are absent. */
export interface ClusterInputs {
  decryption?: RenderSpec['decryption'];
  substitute?: RenderSpec['substitute'];
}

/** The age identities the environment offers, as sops reads them. */
export function ageKeysFromEnv(env = process.env): string[] {
  const keys: string[] = [];
  if (env.SOPS_AGE_KEY) keys.push(env.SOPS_AGE_KEY);
  if (env.SOPS_AGE_KEY_FILE) keys.push(readFileSync(env.SOPS_AGE_KEY_FILE, 'utf8'));
  return keys;
}

const VARIABLE = /\$\{([_A-Za-z][_A-Za-z0-9]*)/g;

/** Variables the objects use that substituteFrom would define: kept as written. */
function keepUnknown(objects: KubeObject[], vars: Record<string, string>): Record<string, string> {
  const kept = { ...vars };
  const text = JSON.stringify(objects);
  for (const m of text.matchAll(VARIABLE)) if (!(m[1]! in kept)) kept[m[1]!] = `\${${m[1]}}`;
  return kept;
}

/** Objects still SOPS-encrypted (no key offline): their `sops` block dropped, values compared as ciphertext. */
function ciphertextAsIs(notes: string[]): RenderStep {
  return {
    name: 'keep ciphertext',
    run(state) {
      for (const obj of state.objects ?? []) {
        if (!isSopsEncrypted(obj)) continue;
        delete (obj as Record<string, unknown>).sops;
        notes.push(
          `${obj.kind}/${obj.metadata?.name} is SOPS-encrypted and no age key was given (SOPS_AGE_KEY or SOPS_AGE_KEY_FILE): compared as ciphertext`,
        );
      }
    },
  };
}

/** Renders the Kustomization `ks` from the tree at `root`. */
export async function renderOffline(
  root: string,
  ks: Kustomization,
  cluster: ClusterInputs = {},
): Promise<OfflineRender> {
  const notes: string[] = [];
  const spec = ks.spec;
  const ageKeys = ageKeysFromEnv();
  const decryption =
    cluster.decryption ?? (spec.decryption && ageKeys.length ? { ageIdentities: ageKeys } : undefined);
  let sub = cluster.substitute;
  if (!sub && spec.postBuild) {
    sub = {
      vars: { ...(spec.postBuild.substitute ?? {}) },
      options: { strict: true, strategy: spec.postBuild.substituteStrategy ?? 'WithVariables' },
    };
    if (spec.postBuild.substituteFrom?.length)
      notes.push(
        `postBuild.substituteFrom (${spec.postBuild.substituteFrom.map((r) => `${r.kind} ${r.name}`).join(', ')}) is read from the cluster: its variables are shown as \${name}`,
      );
  }
  const keepVariables: RenderStep = {
    name: 'keep cluster variables',
    run(state) {
      if (sub && spec.postBuild?.substituteFrom?.length && !cluster.substitute)
        sub = { ...sub, vars: keepUnknown((state.objects ?? []) as KubeObject[], sub.vars) };
      (state.inputs as { substitute?: RenderSpec['substitute'] }).substitute = sub;
    },
  };
  const steps: RenderStep[] = [
    ...folderSource(root),
    ...(decryption ? [decrypt] : []),
    buildStep,
    ...(decryption ? [] : [ciphertextAsIs(notes)]),
    keepVariables,
    substitute,
    label,
  ];
  const inputs: RenderSpec = {
    path: specFolder(spec.path),
    overrides: overridesOf(ks),
    decryption,
    substitute: sub,
    owner: { name: ks.metadata.name ?? '', namespace: ks.metadata.namespace ?? 'default' },
  };
  try {
    const rendered = await runRender(steps, inputs, new AbortController().signal, {
      limits: defaultHelmRenderLimits,
      wasmPath: process.env.MOORING_HELM_WASM || join(REPO_ROOT, 'bin/mooring-helm.wasm'),
    });
    return { objects: rendered.manifests as KubeObject[], notes };
  } catch (err) {
    return { error: (err as Error).message, notes };
  }
}
