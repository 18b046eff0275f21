/**
 * A value to render as EC2 XML: objects become child elements named by their keys, arrays become `<item>`
 * lists, `undefined` is omitted, everything else is text.
 */
export type XmlValue = string | number | boolean | undefined | null | readonly XmlValue[] | XmlObject;

/** An object whose keys are element names (EC2 camelCase members). */
export interface XmlObject {
  readonly [member: string]: XmlValue;
}

/** The XML namespace of EC2 API version 2016-11-15. */
export const EC2_XMLNS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

const SPECIAL = /[&<>"']/;
const ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

/** Escapes text for XML content. */
export function escapeXml(s: string): string {
  return SPECIAL.test(s) ? s.replace(/[&<>"']/g, (c) => ENTITY[c]!) : s;
}

function renderValue(name: string, v: XmlValue): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) {
    let inner = '';
    for (const item of v as readonly XmlValue[]) inner += renderValue('item', item);
    return `<${name}>${inner}</${name}>`;
  }
  if (typeof v === 'object') {
    let inner = '';
    for (const k in v as XmlObject) inner += renderValue(k, (v as XmlObject)[k]);
    return `<${name}>${inner}</${name}>`;
  }
  return `<${name}>${typeof v === 'string' ? escapeXml(v) : String(v)}</${name}>`;
}

/** Renders a successful EC2 response: `<{Action}Response xmlns=…><requestId>…</requestId>…`. */
export function renderResponse(action: string, requestId: string, body: XmlObject): string {
  let out = `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_XMLNS}">`;
  out += `<requestId>${escapeXml(requestId)}</requestId>`;
  for (const k in body) out += renderValue(k, body[k]);
  return `${out}</${action}Response>`;
}

/** Renders an EC2 error document: `<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>`. */
export function renderError(code: string, message: string, requestId: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>' +
    `<Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message>` +
    `</Error></Errors><RequestID>${escapeXml(requestId)}</RequestID></Response>`
  );
}
