/*
 * The API (docs/viewer-api.md): fetch + JSON with the server's errors as ApiError. A 401 from
 * any request means this browser's token is no longer accepted, a 2xx that it is: the state
 * hears both (state.js's setAuthError), the header shows it.
 */
import { setAuthError } from './state.js';

/* Thrown for any answer that is not 2xx; carries the status and the server's error body. */
export class ApiError extends Error {
  constructor(status, body, retryAfterMs) {
    super((body && body.message) || 'HTTP ' + status);
    this.status = status;
    this.kind = body && body.error;
    this.retryAfterMs = retryAfterMs;
  }
}

/* fetch + JSON. A 401 anywhere means this browser's token is no longer accepted: say so. */
export async function api(path, options) {
  const res = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, options));
  let body = null;
  try {
    body = await res.json();
  } catch (e) {
    body = null;
  }
  if (res.status === 401) setAuthError(true);
  else if (res.ok) setAuthError(false);
  if (!res.ok) {
    let retry = body && typeof body.retry_after_ms === 'number' ? body.retry_after_ms : null;
    const header = res.headers.get('Retry-After');
    if (retry === null && header && isFinite(Number(header))) retry = Number(header) * 1000;
    throw new ApiError(res.status, body, retry);
  }
  return body;
}
