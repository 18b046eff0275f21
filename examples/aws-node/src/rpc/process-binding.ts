/**
 * Node's native bindings as `process.binding` hands them out, for the plugin's start path only.
 *
 * The public modules wrapping what the plugin needs — `node:net` around the libuv pipe handle, `node:v8`
 * around `setFlagsFromString` — load Node's public `stream` module on the way (operators, pipeline, compose,
 * duplex…): ≈7 ms of a CNI plugin's ≈30 ms process, paid on every pod ADD and DEL
 * (docs/adr/0004-plugin-start-path.md). `process.binding` is deprecated (DEP0111) but still served for an
 * allow-list of bindings, some of which warn when first taken; warnings are silenced for the call so a plugin's
 * stderr stays clean. Callers shape-check what they get and fall back to the public module when the binding
 * is missing or looks different.
 */

/**
 * Returns `process.binding(name)`, or `undefined` when this Node does not serve it.
 *
 * @param name - an allow-listed binding: `pipe_wrap`, `stream_wrap`, `v8`.
 */
export function processBinding(name: string): Record<string, unknown> | undefined {
  const binding = (process as unknown as { binding?: (name: string) => unknown }).binding;
  if (typeof binding !== 'function') return undefined;
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    const module = binding.call(process, name);
    return typeof module === 'object' && module !== null ? (module as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  } finally {
    process.noDeprecation = quiet ?? false;
  }
}
