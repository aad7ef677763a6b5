// Node side of loading: the glue is built for web and worker only (with Node in its environment
// too, an ES6 factory fails in Node with "__dirname is not defined"; without it, Node 20 tries
// fetch() on a file: URL), so Node reads the .wasm bytes itself and hands them over. Used by
// node.js and fast-node.js.
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `wasmUrl` as a URL: a file path, file: URL or http(s): URL (default: `fallback`). */
export function nodeUrl(wasmUrl, fallback) {
  if (wasmUrl === undefined || wasmUrl === null) return fallback;
  if (wasmUrl instanceof URL) return wasmUrl;
  const text = String(wasmUrl);
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) && !isAbsolute(text)) return new URL(text);
  return pathToFileURL(text);
}

/** How a URL is named in messages: the path for files. */
export function nodeWhere(url) {
  return url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href;
}

export async function nodeBytes(url) {
  if (url.protocol === 'file:') {
    return readFile(url).catch((error) => {
      if (error.code !== 'ENOENT') throw error;
      // The words of the catalogues' "error.no-such-file" (load.js names the file around them).
      throw Object.assign(new Error('no such file'), { message_id: 'error.no-such-file', values: {} });
    });
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  return response.arrayBuffer();
}
