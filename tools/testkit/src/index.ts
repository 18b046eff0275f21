export { describePrivileged, privilegedSkipReason } from './privileged.js';
export { uniqueName } from './names.js';
export { scratchDir } from './scratch.js';
