// dist/relaxed-kernels.js: attention-relaxed.wasm as base64, written by scripts/build.sh.
declare const base64: string;
export default base64;
