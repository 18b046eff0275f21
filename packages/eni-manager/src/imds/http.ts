import { request } from 'node:http';

/** What one HTTP exchange with IMDS produced. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

const MAX_BODY = 256 * 1024;

/**
 * One plain HTTP request over `node:http` with an overall deadline: `timeoutMs` bounds the whole exchange,
 * from the connection attempt to the last byte of the body. (`ClientRequest.setTimeout` would not do: it is an
 * idle timeout armed only once TCP has connected, so a SYN that is silently dropped, as off EC2, would wait for
 * the kernel's connect timeout, minutes.) Rejects with the transport error or a timeout error; never follows
 * redirects. Bodies over 256 KiB are refused: no IMDS answer is that large.
 */
export function httpExchange(
  url: URL,
  method: 'GET' | 'PUT',
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error);
    };
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
      res.on('end', () => {
        clearTimeout(deadline);
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        });
      });
      res.on('error', fail);
    });
    const deadline = setTimeout(
      () => req.destroy(new Error(`IMDS request timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', fail);
    req.end();
  });
}
