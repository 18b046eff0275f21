/**
 * What the packaging test uses to act like a stranger: the README code blocks with their `doctest` directives,
 * and a lockfile that installs packed tarballs offline from the npm cache.
 *
 * @packageDocumentation
 */

export { type DocBlock, type DocBlockMode, readmeBlocks } from './readme-blocks.js';
export { type PackedTarball, scratchLockfile } from './scratch-lock.js';
export { type PublishedWorkspace, publishedWorkspaces, type WorkspaceManifest } from './workspaces.js';
