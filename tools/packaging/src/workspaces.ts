import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A workspace's `package.json`, as far as the packaging checks read it. */
export interface WorkspaceManifest {
  name: string;
  version: string;
  private?: boolean;
  exports: Record<string, unknown>;
  bin?: Record<string, string>;
  files?: string[];
  repository?: { type?: string; url?: string; directory?: string } | string;
}

/** A published workspace: where it is and what its manifest says. */
export interface PublishedWorkspace {
  /** Absolute directory. */
  dir: string;
  /** Directory relative to the repository root, with `/` (what `repository.directory` names). */
  path: string;
  manifest: WorkspaceManifest;
}

/** The published workspaces of the repository at `repo`: every non-private package under packages/ and examples/. */
export function publishedWorkspaces(repo: string): PublishedWorkspace[] {
  return ['packages', 'examples'].flatMap((group) =>
    readdirSync(join(repo, group)).flatMap((d) => {
      const dir = join(repo, group, d);
      let manifest: WorkspaceManifest;
      try {
        manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as WorkspaceManifest;
      } catch (e) {
        // A directory without a manifest is not a workspace; a manifest that cannot be read must not silently
        // drop its package from the install and manifest tests.
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
          return [];
        throw e;
      }
      return manifest.private ? [] : [{ dir, path: `${group}/${d}`, manifest }];
    }),
  );
}
