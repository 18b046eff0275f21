import { request } from 'node:http';

/** What one HTTP exchange with IMDS produced. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

const MAX_BODY = 256 * 1024;

/**
 * One plain HTTP request over `node:http` with an overall timeout. Rejects with the transport error (or a
 * timeout error); never follows redirects. Bodies over 256 KiB are refused: no IMDS answer is that large.
 */
export function httpExchange(
  url: URL,
  method: 'GET' | 'PUT',
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY) {
          req.destroy(new Error(`IMDS response larger than ${MAX_BODY} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        }),
      );
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`IMDS request timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
