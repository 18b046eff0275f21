import { type ActionHandler, dryRun, dryRunSucceeded } from './common.js';

/** AttachNetworkInterface: DeviceIndex (required), InstanceId, NetworkInterfaceId, NetworkCardIndex. */
export const attachNetworkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const eniId = params.required('NetworkInterfaceId');
  const instanceId = params.required('InstanceId');
  if (!params.has('DeviceIndex')) {
    params.required('DeviceIndex');
  }
  const deviceIndex = params.int('DeviceIndex', 0, 99)!;
  const card = params.int('NetworkCardIndex', 0, 63);
  params.string('EnaSrdSpecification.EnaSrdEnabled');
  params.finish();
  if (dry) dryRunSucceeded();
  const attachmentId = state.attach(eniId, instanceId, deviceIndex, card);
  const eni = state.eni(eniId)!;
  return { attachmentId, networkCardIndex: eni.attachment!.networkCardIndex };
};

/** DetachNetworkInterface: AttachmentId, Force. */
export const detachNetworkInterface: ActionHandler = ({ state }, params) => {
  const dry = dryRun(params);
  const attachmentId = params.required('AttachmentId');
  params.bool('Force');
  params.finish();
  if (dry) dryRunSucceeded();
  state.detach(attachmentId);
  return { return: true };
};
