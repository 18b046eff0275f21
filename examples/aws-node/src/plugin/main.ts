/**
 * The `aws-cni` binary: bundled into one CommonJS file that loads only the CNI skeleton and the http2 gRPC
 * client on its fast path.
 */
import { pluginMain } from '@vpc-cni-kit/cni-spec';
import { daemonClient } from './daemon-client.js';
import { awsCniHandlers } from './handlers.js';
import {
  teardownBranchWithoutDaemon,
  teardownWithoutDaemon,
  verifyBranch,
  verifyHost,
} from './host-fallback.js';
import { openPluginLog } from './plugin-log.js';

/** Replaced at bundle time with the package version. */
declare const __AWS_CNI_VERSION__: string | undefined;

const version = typeof __AWS_CNI_VERSION__ === 'string' ? __AWS_CNI_VERSION__ : '';

void pluginMain(
  awsCniHandlers({
    daemon: (socket) => daemonClient(socket, 10_000),
    teardownWithoutDaemon,
    teardownBranchWithoutDaemon,
    verify: verifyHost,
    verifyBranch,
    version,
    openLog: (file, level) => openPluginLog(file, level),
  }),
  {
    // Printed with the CNI versions when run by hand (no CNI_COMMAND, or --help/--version), as egress-cni's.
    about: `aws-cni: AWS VPC CNI plugin (vpc-cni-kit) ${version}`.trim(),
    // The reference's K8sArgs: a key beyond the well-known ones (IP, K8S_POD_*) is code 4 unless the runtime
    // sets IgnoreUnknown (containerd and CRI-O always do), as the Go library's LoadArgs has it.
    knownArgs: [],
  },
);
