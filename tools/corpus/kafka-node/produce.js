'use strict'
// Writes draft corpus vectors produced by kafka-node's own encoders.
// kafka-node builds the consumer protocol inline while encoding JoinGroup /
// SyncGroup requests (lib/protocol/protocol.js: encodeJoinGroupRequest,
// encodeSyncGroupRequest, both exported). This program calls them with the
// protocol objects kafka-node's ConsumerGroup uses (lib/assignment/*) and cuts
// the embedded metadata / assignment bytes out of the encoded request.
//
// Usage: node produce.js <vectors-root>   (writes <root>/kafka-node-<version>/)
const fs = require('fs')
const path = require('path')
const protocol = require('kafka-node/lib/protocol/protocol')
const roundrobin = require('kafka-node/lib/assignment/roundrobin')
const range = require('kafka-node/lib/assignment/range')

const root = process.argv[2]
if (!root) {
  console.error('usage: node produce.js <vectors-root>')
  process.exit(2)
}
const version = require('kafka-node/package.json').version
const dir = path.join(root, `kafka-node-${version}`)
fs.mkdirSync(dir, { recursive: true })
let n = 0
function put(d) {
  const out = {
    name: d.name,
    description: d.description,
    producer: { implementation: 'kafka-node', version, how: d.how },
    kind: d.kind,
    hex: d.hex,
  }
  if (d.notes) out.notes = d.notes
  fs.writeFileSync(path.join(dir, d.name + '.json'), JSON.stringify(out, null, 2) + '\n')
  n++
}

// Minimal reader for the v0 request framing kafka-node writes.
class Cut {
  constructor(buf) {
    this.b = buf
    this.o = 0
  }
  i16() { const v = this.b.readInt16BE(this.o); this.o += 2; return v }
  i32() { const v = this.b.readInt32BE(this.o); this.o += 4; return v }
  str() { const l = this.i16(); const s = this.b.subarray(this.o, this.o + l); this.o += l; return s }
  bytes() { const l = this.i32(); const s = this.b.subarray(this.o, this.o + l); this.o += l; return s }
  header() { this.i32(); this.i16(); this.i16(); this.i32(); this.str() } // size, apiKey, apiVersion, correlationId, clientId
}

// JoinGroup v0: header, groupId, sessionTimeout, memberId, protocolType, [name, metadata]
function joinMetadata(protocols) {
  const c = new Cut(protocol.encodeJoinGroupRequest('corpus', 1, 'g', '', 30000, protocols))
  c.header(); c.str(); c.i32(); c.str(); c.str()
  const count = c.i32()
  const out = []
  for (let i = 0; i < count; i++) {
    c.str()
    out.push(Buffer.from(c.bytes()))
  }
  return out
}

// SyncGroup v0: header, groupId, generationId, memberId, [memberId, assignment]
function syncAssignment(assignment) {
  const c = new Cut(protocol.encodeSyncGroupRequest('corpus', 1, 'g', 5, 'm1', [assignment]))
  c.header(); c.str(); c.i32(); c.str()
  c.i32()
  c.str()
  return Buffer.from(c.bytes())
}

function withSubscription(p, topics) {
  // what ConsumerGroup.setupProtocols does: copy the built-in protocol, set subscription
  return Object.assign({}, p, { subscription: topics })
}

const [rr, rg] = joinMetadata([withSubscription(roundrobin, ['foo', 'bar']), withSubscription(range, ['foo', 'bar'])])
put({
  name: 'roundrobin-join-metadata',
  description: 'kafka-node ConsumerGroup JoinGroup metadata for the built-in roundrobin protocol, topics [foo, bar]',
  how: "protocol.encodeJoinGroupRequest(..., [{...require('kafka-node/lib/assignment/roundrobin'), subscription: ['foo', 'bar']}]) -> protocol metadata",
  kind: 'subscription',
  hex: rr.toString('hex'),
  notes: 'Version 0 (the built-in protocols declare VERSION = 0), topics in subscription order, no userData -> null.',
})
put({
  name: 'range-join-metadata',
  description: 'kafka-node ConsumerGroup JoinGroup metadata for the built-in range protocol, topics [foo, bar]',
  how: "protocol.encodeJoinGroupRequest(..., [{...require('kafka-node/lib/assignment/range'), subscription: ['foo', 'bar']}]) -> protocol metadata",
  kind: 'subscription',
  hex: rg.toString('hex'),
})
const [custom] = joinMetadata([{ name: 'custom', version: 0, subscription: ['foo'], userData: { rack: 'r1' } }])
put({
  name: 'custom-protocol-json-user-data',
  description: "kafka-node JoinGroup metadata of a custom protocol with userData {rack: 'r1'}: userData is written as JSON text",
  how: "protocol.encodeJoinGroupRequest(..., [{ name: 'custom', version: 0, subscription: ['foo'], userData: { rack: 'r1' } }]) -> protocol metadata",
  kind: 'subscription',
  hex: custom.toString('hex'),
  notes: 'kafka-node serialises protocol userData with JSON.stringify (and parses it back with JSON.parse), so non-kafka-node members see JSON bytes.',
})
const [v1] = joinMetadata([{ name: 'custom', version: 1, subscription: ['foo'] }])
put({
  name: 'custom-protocol-v1-v0-layout',
  description: 'kafka-node JoinGroup metadata of a custom protocol declaring version 1: only the v0 fields are written',
  how: "protocol.encodeJoinGroupRequest(..., [{ name: 'custom', version: 1, subscription: ['foo'] }]) -> protocol metadata",
  kind: 'subscription',
  hex: v1.toString('hex'),
  notes: "kafka-node's ProtocolMetadata encoder has only the v0 layout; checkProtocol accepts any version >= 0 for custom protocols, and the version is written verbatim.",
})
const [utf8] = joinMetadata([withSubscription(roundrobin, ['caf\u00e9'])])
put({
  name: 'roundrobin-join-metadata-non-ascii-topic',
  description: "kafka-node roundrobin JoinGroup metadata for topic 'caf\u00e9': the string length is the UTF-16 length (4) but 5 UTF-8 bytes follow",
  how: "protocol.encodeJoinGroupRequest(..., [{...roundrobin, subscription: ['caf\\u00e9']}]) -> protocol metadata",
  kind: 'subscription',
  hex: utf8.toString('hex'),
  notes: "kafka-node writes Int16BE(topic.length) then the UTF-8 bytes, so any non-ASCII topic name gets a wrong length prefix and every later field is misaligned.",
})

// Leader side: the built-in roundrobin assigner, then the SyncGroup encoder.
roundrobin.assign({ foo: [0, 1, 2], bar: [0, 1] }, [
  { id: 'm1', subscription: ['foo', 'bar'] },
  { id: 'm2', subscription: ['foo', 'bar'] },
], (err, result) => {
  if (err) throw err
  const m1 = result.find(a => a.memberId === 'm1')
  put({
    name: 'roundrobin-assignment',
    description: 'kafka-node roundrobin assignment for m1 of [m1, m2] over foo(3 partitions), bar(2): foo:[0,2] bar:[1], encoded by encodeSyncGroupRequest',
    how: "require('kafka-node/lib/assignment/roundrobin').assign({foo: [0,1,2], bar: [0,1]}, [m1, m2]) then protocol.encodeSyncGroupRequest -> m1's assignment",
    kind: 'assignment',
    hex: syncAssignment(m1).toString('hex'),
    notes: 'Assignment version 0, topics in object-key order, no userData -> null.',
  })
  console.log(`kafka-node: wrote ${n} drafts to ${dir}`)
})
