import { copyFileSync, lstatSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { HelmChartError } from './errors.ts';

/**
 * Copies the chart at `src` into `dest` (which must not exist), as plain directories and files:
 * a symbolic link inside the chart is copied as what it points to, and one that leads out of the
 * chart is refused, so the renderer's one preopened directory holds nothing from outside the chart
 * whatever the WASI implementation does with links. Helm's loader follows links the same way.
 */
export function copyChart(src: string, dest: string): void {
  mkdirSync(dest);
  copyChartInto(src, dest);
}

/** copyChart into `dest`, an existing empty directory (a warm renderer's preopened one). */
export function copyChartInto(src: string, dest: string): void {
  let root: string;
  try {
    root = realpathSync(src);
    if (!statSync(root).isDirectory()) throw new HelmChartError(`chart ${src} is not a directory`);
  } catch (err) {
    if (err instanceof HelmChartError) throw err;
    throw new HelmChartError(`chart ${src} cannot be read: ${(err as Error).message}`);
  }
  const inside = (p: string): boolean => p === root || p.startsWith(root + sep);
  const walk = (dir: string, to: string, shown: string, open: Set<string>): void => {
    for (const name of readdirSync(dir).sort()) {
      const from = join(dir, name);
      const rel = shown ? `${shown}/${name}` : name;
      let real = from;
      const st = lstatSync(from);
      if (st.isSymbolicLink()) {
        try {
          real = realpathSync(from);
        } catch {
          throw new HelmChartError(`chart file ${rel} is a link that leads nowhere`);
        }
        if (!inside(real))
          throw new HelmChartError(`chart file ${rel} is a link that leads out of the chart`);
      }
      const target = st.isSymbolicLink() ? statSync(real) : st;
      if (target.isDirectory()) {
        if (open.has(real))
          throw new HelmChartError(`chart directory ${rel} links back to ${relative(root, real) || '.'}`);
        open.add(real);
        mkdirSync(join(to, name));
        walk(real, join(to, name), rel, open);
        open.delete(real);
      } else if (target.isFile()) {
        copyFileSync(real, join(to, name));
      } else {
        throw new HelmChartError(`chart file ${rel} is neither a file nor a directory`);
      }
    }
  };
  walk(root, dest, '', new Set([root]));
}
