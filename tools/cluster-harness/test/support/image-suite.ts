/**
 * The suite function of the image tests: `describePrivileged` where the image tools are installed (they are in
 * scripts/system-packages.txt), a skipped suite that says why otherwise; `VCK_IMAGE_TEST=0` leaves the image
 * tests out on purpose.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describePrivileged } from '@vpc-cni-kit/testkit';
import { describe } from 'vitest';

const IMAGE_TOOLS = ['mmdebstrap', 'umoci', 'skopeo', 'containerd', 'runc'];

function skipReason(): string | undefined {
  if (process.env['VCK_IMAGE_TEST'] === '0') return 'VCK_IMAGE_TEST=0';
  const missing = IMAGE_TOOLS.filter(
    (tool) => !['/usr/bin', '/usr/sbin', '/bin', '/sbin'].some((dir) => existsSync(join(dir, tool))),
  );
  return missing.length > 0 ? `missing ${missing.join(', ')} (scripts/system-packages.txt)` : undefined;
}

/** `describePrivileged`, or a skipped suite naming the reason (opted out, or an image tool missing). */
export function imageSuite(name: string, body: () => void): void {
  const reason = skipReason();
  if (reason === undefined) describePrivileged(name, body);
  else describe.skip(`${name} (${reason})`, body);
}
