import { randomBytes, randomUUID } from 'node:crypto';
import { asRecord } from './builtin-types.js';
import { crdProblems, establishedStatus } from './crd-registry.js';
import { refuseTooDeep } from './depth.js';
import { jsonPatch, mergePatch, type PatchType, strategicMergePatch } from './patch.js';
import { groupVersion, type KubeObject, type ResourceType } from './resource-type.js';
import { checkSchema } from './schema.js';
import { type FieldRequirement, type LabelSelector, matchesFields, matchesLabels } from './selectors.js';
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  invalid,
  KubeApiError,
  notFound,
  STALE_OBJECT,
  type Status,
  type StatusCause,
  successStatus,
} from './status.js';
import { ObjectStore } from './store.js';
import { CRD_STORAGE_KEY } from './type-registry.js';
import { metadataProblems, nameProblems, requiredValue } from './validation.js';

/** How unknown fields in a request body are treated (the `fieldValidation` query parameter). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** Options common to writes. */
export interface WriteOptions {
  /** `dryRun=All`: validate and answer, persist nothing. */
  readonly dryRun?: boolean;
  /** Unknown-field handling (default `Warn`, as in the real server). */
  readonly fieldValidation?: FieldValidation;
}

/** A write's result: the object and any warnings for the `Warning` response header. */
export interface WriteResult {
  /** The object as served. */
  readonly object: KubeObject;
  /** Warnings (unknown fields under `Warn`). */
  readonly warnings: readonly string[];
}

/** List parameters. */
export interface ListOptions {
  /** Parsed label selector. */
  readonly labelSelector?: LabelSelector;
  /** Parsed field selector. */
  readonly fieldSelector?: readonly FieldRequirement[];
  /** Page size (0 = all). */
  readonly limit?: number;
  /** Continue token of the previous page. */
  readonly continueToken?: string;
}

const META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

const SYSTEM_META = [
  'uid',
  'creationTimestamp',
  'generation',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function generateSuffix(): string {
  const bytes = randomBytes(5);
  return [...bytes].map((b) => NAME_SUFFIX_ALPHABET[b % NAME_SUFFIX_ALPHABET.length]).join('');
}

/** Formats ms since the epoch as the API's RFC 3339 seconds timestamp. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function specPart(obj: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return JSON.stringify(rest);
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) =>
    JSON.stringify({
      ...o,
      metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined },
    });
  return strip(a) === strip(b);
}

interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeContinue(text: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.start === 'string') return t;
  } catch {
    // fall through
  }
  throw badRequest(`invalid continue token: ${text}`);
}

/** The `ObjectMeta` fields that are strings in Go: any other JSON type there is a 400, as the decoder answers. */
const META_STRINGS = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'selfLink'] as const;

/** The JSON type of a value, as Go's decoder names it in an unmarshal error. */
function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/**
 * The object semantics of the API server over the {@link ObjectStore}: create/get/list/update/patch/delete with
 * defaulting, pruning, validation, optimistic concurrency, generation, finalizers and version conversion.
 * Each call validates fully before it writes, so a refused request changes nothing.
 */
export class ObjectApi {
  /**
   * @param store - where objects live
   * @param now - the time source for timestamps (ms since the epoch)
   */
  constructor(
    readonly store: ObjectStore,
    private readonly now: () => number,
  ) {}

  /** Storage form → served form of `t`. */
  served(t: ResourceType, obj: KubeObject): KubeObject {
    const out = t.converter ? t.converter.fromStorage(obj) : { ...obj };
    return { ...out, apiVersion: groupVersion(t), kind: t.kind };
  }

  #storageForm(t: ResourceType, obj: KubeObject): KubeObject {
    return t.converter ? t.converter.toStorage(obj) : obj;
  }

  #resource(t: ResourceType) {
    return { group: t.group, resource: t.plural };
  }

  /** Reads one object (404 when absent). */
  get(t: ResourceType, namespace: string, name: string): KubeObject {
    const obj = this.store.get(t.storageKey, namespace, name);
    if (!obj) throw notFound(this.#resource(t), name);
    return this.served(t, obj);
  }

  /** Lists objects with selectors and paging; returns the `<Kind>List`. */
  list(t: ResourceType, namespace: string | undefined, o: ListOptions): KubeObject {
    let rv = this.store.resourceVersion;
    let start = '';
    if (o.continueToken) {
      const token = decodeContinue(o.continueToken);
      try {
        this.store.changesSince(t.storageKey, token.rv);
      } catch {
        throw expired(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
      rv = token.rv;
      start = token.start;
    }
    const matching = this.store
      .list(t.storageKey, namespace)
      .filter((obj) => ObjectStore.key(obj) > start || start === '')
      .map((obj) => this.served(t, obj))
      .filter((obj) => this.matches(obj, o.labelSelector, o.fieldSelector));
    const limit = o.limit ?? 0;
    const page = limit > 0 ? matching.slice(0, limit) : matching;
    const more = limit > 0 && matching.length > limit;
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (more) {
      metadata.continue = encodeContinue({ rv, start: ObjectStore.key(page[page.length - 1]!) });
      if (!o.labelSelector?.length && !o.fieldSelector?.length)
        metadata.remainingItemCount = matching.length - limit;
    }
    return { kind: t.listKind, apiVersion: groupVersion(t), metadata, items: page };
  }

  /** Whether a served object passes the selectors. */
  matches(
    obj: KubeObject,
    labels: LabelSelector | undefined,
    fields: readonly FieldRequirement[] | undefined,
  ): boolean {
    if (
      labels &&
      !matchesLabels(labels, asRecord(obj.metadata?.labels) as Record<string, string> | undefined)
    )
      return false;
    return !fields || matchesFields(fields, obj);
  }

  /** Prunes and validates a candidate object; returns warnings. Throws 400/422 without side effects. */
  #check(
    t: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    fv: FieldValidation,
  ): { object: KubeObject; warnings: string[] } {
    const unknown: string[] = [];
    const meta = asRecord(obj.metadata) ?? {};
    const cleanMeta: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(meta)) {
      if (META_FIELDS.has(k)) cleanMeta[k] = v;
      else unknown.push(`.metadata.${k}`);
    }
    let body: KubeObject = { ...obj, metadata: cleanMeta };
    const causes: StatusCause[] = [];
    if (t.schema) {
      const { apiVersion, kind, metadata, ...rest } = body;
      const rootSchema = { ...t.schema, properties: { ...(t.schema.properties ?? {}) } };
      delete (rootSchema.properties as Record<string, unknown>).apiVersion;
      delete (rootSchema.properties as Record<string, unknown>).kind;
      delete (rootSchema.properties as Record<string, unknown>).metadata;
      const r = checkSchema(
        {
          ...rootSchema,
          required: (t.schema.required ?? []).filter((f) => !['apiVersion', 'kind', 'metadata'].includes(f)),
        },
        rest,
      );
      causes.push(...r.causes);
      unknown.push(...r.unknownFields);
      body = { apiVersion, kind, metadata: metadata ?? {}, ...(r.value as Record<string, unknown>) };
    } else if (t.topLevelFields) {
      for (const k of Object.keys(body))
        if (!t.topLevelFields.includes(k)) {
          unknown.push(`.${k}`);
          delete body[k];
        }
    }
    if (unknown.length > 0 && fv === 'Strict')
      throw badRequest(
        `strict decoding error: ${unknown.map((u) => `unknown field "${u.slice(1)}"`).join(', ')}`,
      );
    const name = String(cleanMeta.name ?? '');
    if (name === '')
      causes.push({
        ...requiredValue('metadata.name'),
        message: 'Required value: name or generateName is required',
      });
    else causes.push(...nameProblems(t.nameRule, name));
    causes.push(...metadataProblems(cleanMeta));
    if (t.plural === 'customresourcedefinitions' && t.group === 'apiextensions.k8s.io')
      causes.push(...crdProblems(body, old));
    if (t.validate) causes.push(...t.validate(body, old ? this.served(t, old) : undefined));
    if (causes.length > 0) throw invalid(t.kind, t.group, name, causes);
    return {
      object: body,
      warnings: fv === 'Warn' ? unknown.map((u) => `unknown field "${u.slice(1)}"`) : [],
    };
  }

  #checkIdentity(t: ResourceType, body: unknown, namespace: string): KubeObject {
    const obj = asRecord(body);
    if (!obj) throw badRequest(`the object provided is unrecognized (must be of type ${t.kind})`);
    // A patch (or a webhook's) can nest what no single body did: the result is held to the same depth.
    refuseTooDeep(obj);
    if (obj.apiVersion !== undefined && obj.apiVersion !== groupVersion(t))
      throw badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${groupVersion(t)})`,
      );
    if (obj.kind !== undefined && obj.kind !== t.kind)
      throw badRequest(
        `the kind in the data (${String(obj.kind)}) does not match the expected kind (${t.kind})`,
      );
    const meta = obj.metadata === undefined ? {} : asRecord(obj.metadata);
    if (!meta) throw badRequest('metadata must be an object');
    // What Go's decoder refuses before anything is stored (an object named 5 would be stored, then listed, as 5).
    for (const f of META_STRINGS)
      if (meta[f] !== undefined && meta[f] !== null && typeof meta[f] !== 'string')
        throw badRequest(
          `json: cannot unmarshal ${jsonTypeName(meta[f])} into Go struct field ObjectMeta.metadata.${f} of type string`,
        );
    if (
      meta.ownerReferences !== undefined &&
      meta.ownerReferences !== null &&
      !Array.isArray(meta.ownerReferences)
    )
      throw badRequest(
        `json: cannot unmarshal ${jsonTypeName(meta.ownerReferences)} into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference`,
      );
    if (t.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace)
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
    }
    const m = { ...meta };
    if (t.namespaced) m.namespace = namespace;
    else delete m.namespace;
    return { ...obj, apiVersion: groupVersion(t), kind: t.kind, metadata: m };
  }

  #requireNamespace(namespace: string): void {
    if (!this.store.get('/namespaces', '', namespace))
      throw notFound({ group: '', resource: 'namespaces' }, namespace);
  }

  /** Creates an object (POST to the collection). */
  create(t: ResourceType, namespace: string, body: unknown, o: WriteOptions = {}): WriteResult {
    const obj = this.#checkIdentity(t, body, namespace);
    const meta = obj.metadata!;
    if (
      (meta.name === undefined || meta.name === '') &&
      typeof meta.generateName === 'string' &&
      meta.generateName !== ''
    )
      meta.name = `${meta.generateName}${generateSuffix()}`;
    if (t.namespaced) this.#requireNamespace(namespace);
    for (const f of [...SYSTEM_META, 'resourceVersion', 'selfLink', 'managedFields']) delete meta[f];
    if (t.custom && t.statusSubresource) delete obj.status;
    const { object, warnings } = this.#check(t, obj, undefined, o.fieldValidation ?? 'Warn');
    const name = String(object.metadata!.name);
    if (this.store.get(t.storageKey, t.namespaced ? namespace : '', name))
      throw alreadyExists(this.#resource(t), name);
    const m = object.metadata!;
    m.uid = randomUUID();
    m.creationTimestamp = rfc3339(this.now());
    if (t.generation) m.generation = 1;
    t.defaultOnCreate?.(object);
    if (t.storageKey === CRD_STORAGE_KEY) object.status = establishedStatus(object, rfc3339(this.now()));
    if (o.dryRun) return { object: this.served(t, this.#storageForm(t, object)), warnings };
    const stored = this.store.put(t.storageKey, this.#storageForm(t, object));
    return { object: this.served(t, stored), warnings };
  }

  /** Replaces an object (PUT), or its status (`subresource` = `status`). */
  update(
    t: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    subresource: '' | 'status',
    o: WriteOptions = {},
  ): WriteResult {
    const old = this.store.get(t.storageKey, t.namespaced ? namespace : '', name);
    if (!old) throw notFound(this.#resource(t), name);
    const obj = this.#checkIdentity(t, body, namespace);
    if (obj.metadata!.name !== undefined && obj.metadata!.name !== name)
      throw badRequest(
        `the name of the object (${String(obj.metadata!.name)}) does not match the name on the URL (${name})`,
      );
    return this.#replace(t, old, obj, subresource, o);
  }

  #replace(
    t: ResourceType,
    oldStorage: KubeObject,
    candidate: KubeObject,
    subresource: '' | 'status',
    o: WriteOptions,
  ): WriteResult {
    const old = this.served(t, oldStorage);
    const name = String(old.metadata!.name);
    const meta = candidate.metadata!;
    const rv = meta.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== old.metadata!.resourceVersion)
      throw conflict(this.#resource(t), name, STALE_OBJECT);
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== old.metadata!.uid)
      throw conflict(
        this.#resource(t),
        name,
        `Precondition failed: UID in precondition: ${String(meta.uid)}, UID in object meta: ${String(old.metadata!.uid)}`,
      );
    let next: KubeObject;
    if (subresource === 'status') {
      next = { ...old, status: candidate.status };
      if (candidate.status === undefined) delete next.status;
    } else {
      next = { ...candidate, metadata: { ...meta, name } };
      if (t.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = old.status;
      }
    }
    const nm = next.metadata!;
    for (const f of SYSTEM_META) {
      if (old.metadata![f] === undefined) delete nm[f];
      else nm[f] = old.metadata![f];
    }
    nm.resourceVersion = old.metadata!.resourceVersion;
    if (t.namespaced) nm.namespace = old.metadata!.namespace;
    const { object, warnings } = this.#check(t, next, oldStorage, o.fieldValidation ?? 'Warn');
    if (t.generation && specPart(object) !== specPart(old))
      object.metadata!.generation = Number(old.metadata!.generation ?? 0) + 1;
    if (old.metadata!.deletionTimestamp !== undefined) {
      const added = ((object.metadata!.finalizers as string[] | undefined) ?? []).filter(
        (f) => !((old.metadata!.finalizers as string[] | undefined) ?? []).includes(f),
      );
      if (added.length > 0)
        throw invalid(t.kind, t.group, name, [
          {
            reason: 'FieldValueForbidden',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
            field: 'metadata.finalizers',
          },
        ]);
    }
    if (sameContent(object, old)) return { object: old, warnings };
    if (o.dryRun) return { object, warnings };
    const storage = this.#storageForm(t, object);
    const finalizers = (object.metadata!.finalizers as unknown[] | undefined) ?? [];
    if (object.metadata!.deletionTimestamp !== undefined && finalizers.length === 0) {
      const written = this.store.put(t.storageKey, storage);
      this.#removeNow(t, written);
      return { object: this.served(t, written), warnings };
    }
    const stored = this.store.put(t.storageKey, storage);
    return { object: this.served(t, stored), warnings };
  }

  /** Applies a patch to an object or its status. */
  patch(
    t: ResourceType,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    subresource: '' | 'status',
    o: WriteOptions = {},
  ): WriteResult {
    if (type === 'apply' || (type === 'strategic' && !t.strategicMerge)) {
      const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
      if (t.strategicMerge) accepted.push('application/strategic-merge-patch+json');
      throw new KubeApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      );
    }
    const oldStorage = this.store.get(t.storageKey, t.namespaced ? namespace : '', name);
    if (!oldStorage) throw notFound(this.#resource(t), name);
    const old = this.served(t, oldStorage);
    const patched =
      type === 'json'
        ? jsonPatch(old, patch)
        : type === 'merge'
          ? mergePatch(old, patch)
          : strategicMergePatch(old, patch, t.listStrategies);
    const obj = this.#checkIdentity(t, patched, namespace);
    if (obj.metadata!.name !== name)
      throw badRequest(
        `the name of the object (${String(obj.metadata!.name)}) does not match the name on the URL (${name})`,
      );
    return this.#replace(t, oldStorage, obj, subresource, o);
  }

  /**
   * Deletes an object: with finalizers it only gets a deletionTimestamp (removed once the last finalizer goes),
   * otherwise it is removed at once (pods included: no kubelet grace period). Deleting a namespace removes its
   * objects; deleting a CRD removes its custom objects.
   */
  delete(
    t: ResourceType,
    namespace: string,
    name: string,
    options: unknown,
    o: WriteOptions = {},
  ): KubeObject | Status {
    const oldStorage = this.store.get(t.storageKey, t.namespaced ? namespace : '', name);
    if (!oldStorage) throw notFound(this.#resource(t), name);
    const old = this.served(t, oldStorage);
    const pre = asRecord(asRecord(options)?.preconditions);
    if (pre?.uid !== undefined && pre.uid !== old.metadata!.uid)
      throw conflict(
        this.#resource(t),
        name,
        `Precondition failed: UID in precondition: ${String(pre.uid)}, UID in object meta: ${String(old.metadata!.uid)}`,
      );
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== old.metadata!.resourceVersion)
      throw conflict(
        this.#resource(t),
        name,
        `Precondition failed: ResourceVersion in precondition: ${String(pre.resourceVersion)}, ResourceVersion in object meta: ${String(old.metadata!.resourceVersion)}`,
      );
    if (o.dryRun)
      return t.deleteReturnsObject
        ? old
        : successStatus({
            name,
            ...(t.group ? { group: t.group } : {}),
            kind: t.plural,
            uid: String(old.metadata!.uid),
          });
    const finalizers = (old.metadata!.finalizers as unknown[] | undefined) ?? [];
    if (finalizers.length > 0) {
      if (old.metadata!.deletionTimestamp !== undefined) return old;
      const marked = {
        ...oldStorage,
        metadata: {
          ...oldStorage.metadata,
          deletionTimestamp: rfc3339(this.now()),
          deletionGracePeriodSeconds: 0,
        },
      };
      return this.served(t, this.store.put(t.storageKey, marked));
    }
    const gone = this.#removeNow(t, oldStorage);
    if (t.deleteReturnsObject) return this.served(t, gone);
    return successStatus({
      name,
      ...(t.group ? { group: t.group } : {}),
      kind: t.plural,
      uid: String(old.metadata!.uid),
    });
  }

  #removeNow(t: ResourceType, obj: KubeObject): KubeObject {
    if (t.storageKey === '/namespaces') {
      const ns = String(obj.metadata!.name);
      for (const key of this.#namespacedStorageKeys())
        for (const o of this.store.list(key, ns)) this.store.remove(key, o);
    }
    if (t.storageKey === CRD_STORAGE_KEY) {
      const spec = asRecord(obj.spec);
      const key = `${String(spec?.group)}/${String(asRecord(spec?.names)?.plural)}`;
      for (const o of this.store.list(key)) this.store.remove(key, o);
    }
    return this.store.remove(t.storageKey, obj)!;
  }

  #namespacedStorageKeys: () => string[] = () => [];

  /** Tells the API which storage keys hold namespaced objects (for namespace deletion). */
  setNamespacedKeys(fn: () => string[]): void {
    this.#namespacedStorageKeys = fn;
  }

  /** Deletes every object of a collection that the selectors match; returns the list of what was deleted. */
  deleteCollection(
    t: ResourceType,
    namespace: string | undefined,
    l: ListOptions,
    o: WriteOptions = {},
  ): KubeObject {
    const list = this.list(t, namespace, { ...l, limit: 0 });
    const items = (list.items as KubeObject[]).map((item) => {
      const r = this.delete(
        t,
        String(item.metadata!.namespace ?? ''),
        String(item.metadata!.name),
        undefined,
        o,
      );
      return (r as KubeObject).kind === 'Status' ? item : (r as KubeObject);
    });
    return { ...list, items };
  }
}
