import { parseArgs } from 'node:util';
import { defaultLocation, down, locationAt, status, up } from './control-plane.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { dir: { type: 'string' }, 'with-workloads': { type: 'boolean' } },
});
const loc = values.dir ? locationAt(values.dir) : defaultLocation();
const log = (line: string) => console.error(`control-plane: ${line}`);

try {
  switch (positionals[0]) {
    case 'up': {
      const started = Date.now();
      const running = await up(loc, log, { workloads: values['with-workloads'] === true });
      log(`up in ${((Date.now() - started) / 1000).toFixed(1)}s; export KUBECONFIG=${running.kubeconfig}`);
      console.log(running.kubeconfig);
      break;
    }
    case 'down':
      await down(loc, log);
      log(`removed ${loc.dir}`);
      break;
    case 'status': {
      const running = await status(loc);
      if (!running) {
        log('not running');
        process.exitCode = 1;
      } else {
        log(
          `running at ${running.server} (etcd pid ${running.etcdPid}, kube-apiserver pid ${running.apiserverPid})`,
        );
        const w = running.workloads;
        if (w && running.workloadsRunning) {
          log(
            `with workloads (kube-controller-manager pid ${w.kcmPid}, kube-scheduler pid ${w.schedulerPid}, kwok pid ${w.kwokPid})`,
          );
        } else if (w) {
          log('some of its workload processes have stopped: up --with-workloads restarts them');
        }
        console.log(running.kubeconfig);
      }
      break;
    }
    default:
      throw new Error(`unknown command ${positionals[0] ?? '(none)'}: use up, down or status`);
  }
} catch (err) {
  log((err as Error).message);
  process.exitCode = 1;
}
