// The CRDs a vpc-resource-controller benchmark cluster needs (SecurityGroupPolicy from the controller's manifests,
// CNINode from aws-node's), created in a kube-simulator from the files the manifests ship.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const repo = new URL('../../', import.meta.url).pathname;

/** Creates the SecurityGroupPolicy and CNINode CRDs in `kube` (a running kube-simulator). */
export function createControllerCrds(kube) {
  for (const file of [
    'examples/vpc-resource-controller/manifests/crds.yaml',
    'deploy/kustomize/base/crds.yaml',
  ])
    for (const doc of parseAllDocuments(readFileSync(join(repo, file), 'utf8'))) {
      const obj = doc.toJS();
      if (obj?.kind === 'CustomResourceDefinition')
        kube.objects.create('apiextensions.k8s.io/v1', 'customresourcedefinitions', obj);
    }
}
