// A minimal ONNX (protobuf) writer for the benchmark's peer onnxruntime-web: just enough for
// attention as a 5-node graph. No Node imports, so the browser benchmark (bench/browser-page.mjs)
// loads it too. Benchmark-only: nothing here is part of the package.

function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => [...key(field, 0), ...varint(n)];
const bytes = (field, content) => [...key(field, 2), ...varint(content.length), ...content];
const str = (field, text) => bytes(field, [...new TextEncoder().encode(text)]);

/** ValueInfoProto of a 2-D tensor with symbolic dims. elem: 1 float, 11 double. */
function valueInfo(name, elem, dims) {
  const shape = dims.flatMap((d) => bytes(1, typeof d === 'string' ? str(2, d) : int(1, d)));
  const tensorType = [...int(1, elem), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

function node(op, inputs, outputs, attributes = []) {
  return [
    ...inputs.flatMap((i) => str(1, i)),
    ...outputs.flatMap((o) => str(2, o)),
    ...str(4, op),
    ...attributes.flatMap((a) => bytes(5, a)),
  ];
}

/** TensorProto scalar initializer (dims none, data in raw_data). */
function scalar(name, elem, value) {
  const raw = new Uint8Array((elem === 11 ? new Float64Array([value]) : new Float32Array([value])).buffer);
  return [...int(2, elem), ...str(8, name), ...bytes(9, [...raw])];
}

/** attention(Q, K, V) = Softmax(MatMul(Q, Transpose(K)) * scale) · V as an ONNX model. */
export function attentionModel(elem, scale) {
  const perm = [...str(1, 'perm'), ...int(20, 7), ...bytes(8, [...varint(1), ...varint(0)])];
  const axis = [...str(1, 'axis'), ...int(20, 2), ...int(3, 1)];
  const graph = [
    ...bytes(1, node('Transpose', ['K'], ['Kt'], [perm])),
    ...bytes(1, node('MatMul', ['Q', 'Kt'], ['scores'])),
    ...bytes(1, node('Mul', ['scores', 'scale'], ['scaled'])),
    ...bytes(1, node('Softmax', ['scaled'], ['weights'], [axis])),
    ...bytes(1, node('MatMul', ['weights', 'V'], ['output'])),
    ...str(2, 'attention'),
    ...bytes(5, scalar('scale', elem, scale)),
    ...bytes(11, valueInfo('Q', elem, ['L', 'd'])),
    ...bytes(11, valueInfo('K', elem, ['S', 'd'])),
    ...bytes(11, valueInfo('V', elem, ['S', 'dv'])),
    ...bytes(12, valueInfo('output', elem, ['L', 'dv'])),
  ];
  const model = [...int(1, 8), ...bytes(8, [...str(1, ''), ...int(2, 17)]), ...bytes(7, graph)];
  return new Uint8Array(model);
}
