import type { CredentialFileEvent } from '../kube/credential-file.js';
import type { Logger } from './logger.js';
import type { ControllerMetrics } from './metrics.js';

/**
 * What the controller does with a {@link CredentialFileEvent}: every re-read whose content was not used counts in
 * `kube_credential_file_reread_refused_total{file}`; the first re-read to find a given problem is one warning with
 * a hint (a file that stays bad is re-read once a refresh period, counted each time, not logged again), and a file
 * that reads well again is one info line.
 */
export function reportCredentialFiles(
  log: Logger,
  metrics?: ControllerMetrics | undefined,
): (event: CredentialFileEvent) => void {
  return (event) => {
    if (event.kind === 'recovered') {
      log.log('info', 'Kubernetes credential file readable again', { file: event.role, path: event.path });
      return;
    }
    metrics?.credentialFileRefused(event.role);
    if (!event.first) return;
    log.log('warn', 'Kubernetes credential file not re-read; using the one read before', {
      file: event.role,
      path: event.path,
      problem: event.problem,
      hint:
        event.role === 'token'
          ? 'the kubelet writes the ServiceAccount token as a regular file: check what replaced it; the previous token is used until the API server refuses it'
          : 'the file must be a regular file: check what replaced it; the previous content stays in use until it is a regular file again or the controller restarts',
    });
  };
}
