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

/** Escapes text for XML content. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;',
  );
}

function renderValue(name: string, v: XmlValue, out: string[]): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) {
    out.push(`<${name}>`);
    for (const item of v as readonly XmlValue[]) {
      if (item === undefined || item === null) continue;
      renderValue('item', item, out);
    }
    out.push(`</${name}>`);
    return;
  }
  if (typeof v === 'object') {
    out.push(`<${name}>`);
    for (const [k, child] of Object.entries(v as XmlObject)) renderValue(k, child, out);
    out.push(`</${name}>`);
    return;
  }
  out.push(`<${name}>${escapeXml(String(v))}</${name}>`);
}

/** Renders a successful EC2 response: `<{Action}Response xmlns=…><requestId>…</requestId>…`. */
export function renderResponse(action: string, requestId: string, body: XmlObject): string {
  const out: string[] = [`<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_XMLNS}">`];
  out.push(`<requestId>${escapeXml(requestId)}</requestId>`);
  for (const [k, v] of Object.entries(body)) renderValue(k, v, out);
  out.push(`</${action}Response>`);
  return out.join('');
}

/** Renders an EC2 error document: `<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>`. */
export function renderError(code: string, message: string, requestId: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>' +
    `<Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message>` +
    `</Error></Errors><RequestID>${escapeXml(requestId)}</RequestID></Response>`
  );
}
