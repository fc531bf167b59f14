/**
 * A kernel thread of `KernelThreads` (warm.ts): one workspace's warm kernels, served off the host's event
 * loop (docs/run.md §5). Calls run as KernelHost runs them; log lines and answers go back as messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { KernelHost, type ThreadMessage, type ThreadRequest } from './warm.js';
import type { CommandEnv } from './commands.js';

const port = parentPort!;
const post = (m: ThreadMessage) => port.postMessage(m);
const host = new KernelHost({ ...(workerData as CommandEnv), logSink: (line) => post({ type: 'log', line }) });

port.on('message', (m: ThreadRequest) => {
  if (m.type === 'call')
    void host
      .call(m.argv)
      .then((r) => post({ type: 'done', id: m.id, result: { ...r, text: JSON.stringify(r.envelope, null, 2) } }));
  else void host.close().finally(() => post({ type: 'closed' }));
});
