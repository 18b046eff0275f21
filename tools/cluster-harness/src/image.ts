/**
 * The container images deploy/image/build.mjs builds (mmdebstrap, umoci, skopeo): what the image tests and the
 * demo import into containerd.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The images deploy/image/build.mjs knows. */
export type ImageName = 'aws-node' | 'vpc-resource-controller';

/** What deploy/image/build.mjs reports of one build. */
export interface ImageBuild {
  /** Its name in the docker-archive, e.g. `localhost/vpc-cni-kit/aws-node:dev`. */
  readonly image: string;
  /** The OCI layout directory. */
  readonly ociLayout: string;
  /** The docker-archive, for `ctr images import`. */
  readonly dockerArchive: string;
  /** Its layers, bottom first; `base` marks those of the base every image shares (Debian, Node). */
  readonly layers: readonly { readonly digest: string; readonly size: string; readonly base: boolean }[];
  /** Sizes, in MiB, as text. */
  readonly sizes: Readonly<Record<string, string>>;
  /** Seconds the build took. */
  readonly seconds: number;
}

/**
 * Builds `name` with deploy/image/build.mjs (as root, after `npm run build`; the first build downloads Debian
 * packages, later ones reuse the cached base) and returns its report. Throws with the script's message on failure.
 */
export function buildImage(name: ImageName): ImageBuild {
  const script = fileURLToPath(new URL('../../../deploy/image/build.mjs', import.meta.url));
  return JSON.parse(
    execFileSync(process.execPath, [script, '--image', name], {
      encoding: 'utf8',
      timeout: 900_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as ImageBuild;
}
