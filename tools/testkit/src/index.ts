export { type ClosedExchange, idleConnections, sendUntilClosed, serverHolds } from './connections.js';
export { dribble } from './dribble.js';
export { eventually } from './eventually.js';
export { fifoWithLateWriter, type LateFifo } from './fifo.js';
export { freePort } from './free-port.js';
export { debianKubectl, type KubectlResult, runKubectl, UNPACKED_DEBIAN_KUBECTL } from './kubectl.js';
export {
  buildLibcniRunner,
  Libcni,
  type LibcniAttachment,
  type LibcniError,
  type LibcniOutcome,
} from './libcni.js';
export { uniqueName } from './names.js';
export { ipCli } from './netns-cli.js';
export { askPeer, createNamespaces, inNs, run, startPeerReporter } from './netns-shell.js';
export { describePrivileged, privilegedSkipReason } from './privileged.js';
export { scratchDir } from './scratch.js';
