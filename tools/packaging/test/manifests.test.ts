/**
 * The metadata every published manifest shares, read from the workspaces (no packing): one `repository` form,
 * written once in the root package.json, with `directory` naming the package's own folder, so npm's and the
 * registry's links lead to the right place.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { describe, expect, it } from 'vitest';
import { publishedWorkspaces } from '../src/index.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  repository?: { type?: string; url?: string };
};

describe('published manifests', () => {
  it('the root names the repository once: a git+https URL of a .git repository', () => {
    expect(root.repository?.type).toBe('git');
    expect(root.repository?.url).toMatch(/^git\+https:\/\/[^/]+\/[^/]+\/[^/]+\.git$/);
  });

  it("every published package has the root's repository with its own folder as directory", () => {
    const published = publishedWorkspaces(repo);
    expect(published.length).toBeGreaterThan(0);
    for (const w of published) {
      expect(w.manifest.repository, w.manifest.name).toEqual({
        type: 'git',
        url: root.repository?.url,
        directory: w.path,
      });
    }
  });

  it('the scaffold script writes the same form for a new package', () => {
    const scratch = scratchDir('vck-scaffold-');
    try {
      writeFileSync(join(scratch.path, 'package.json'), JSON.stringify(root));
      execFileSync('bash', [join(repo, 'scripts/scaffold-package.sh'), 'probe', 'a probe'], {
        cwd: scratch.path,
        stdio: 'pipe',
      });
      const made = JSON.parse(readFileSync(join(scratch.path, 'packages/probe/package.json'), 'utf8'));
      expect(made.repository).toEqual({
        type: 'git',
        url: root.repository?.url,
        directory: 'packages/probe',
      });
    } finally {
      scratch.remove();
    }
  });
});
