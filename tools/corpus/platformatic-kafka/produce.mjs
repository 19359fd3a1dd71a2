// Writes draft corpus vectors produced by @platformatic/kafka's exported
// consumer-protocol encoders (encodeConsumerProtocolSubscription /
// encodeConsumerProtocolAssignment), the functions its Consumer uses for
// JoinGroup metadata and SyncGroup assignments.
//
// Usage: node produce.mjs <vectors-root>   (writes <root>/platformatic-kafka-<version>/)
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { encodeConsumerProtocolSubscription as sub, encodeConsumerProtocolAssignment as asg } from '@platformatic/kafka'

const root = process.argv[2]
if (!root) {
  console.error('usage: node produce.mjs <vectors-root>')
  process.exit(2)
}
const require = createRequire(import.meta.url)
const pkgJson = path.join(path.dirname(require.resolve('@platformatic/kafka')), '..', 'package.json')
const version = JSON.parse(fs.readFileSync(pkgJson, 'utf8')).version
const dir = path.join(root, `platformatic-kafka-${version}`)
fs.mkdirSync(dir, { recursive: true })
let n = 0
function put(d) {
  const out = {
    name: d.name,
    description: d.description,
    producer: { implementation: '@platformatic/kafka', version, how: d.how },
    kind: d.kind,
    hex: d.hex,
  }
  if (d.notes) out.notes = d.notes
  fs.writeFileSync(path.join(dir, d.name + '.json'), JSON.stringify(out, null, 2) + '\n')
  n++
}

const cases = [
  ['basic', 'topics [foo, bar], no userData, owned foo-0, generation 5, rack r1',
    { topics: ['foo', 'bar'], ownedPartitions: [{ topic: 'foo', partitions: [0] }], generationId: 5, rackId: 'r1' },
    "topics: ['foo', 'bar'], ownedPartitions: [{topic: 'foo', partitions: [0]}], generationId: 5, rackId: 'r1'"],
  ['empty-user-data', 'topics [foo], empty userData buffer, nothing else',
    { topics: ['foo'], userData: Buffer.alloc(0) },
    "topics: ['foo'], userData: Buffer.alloc(0)"],
  ['owned-unsorted', "topics [foo, bar], userData 010203, owned foo:[2,0] then bar:[1], generation 7, rack ''",
    { topics: ['foo', 'bar'], userData: Buffer.from([1, 2, 3]), ownedPartitions: [{ topic: 'foo', partitions: [2, 0] }, { topic: 'bar', partitions: [1] }], generationId: 7, rackId: '' },
    "topics: ['foo', 'bar'], userData: Buffer.from([1, 2, 3]), ownedPartitions: [{topic: 'foo', partitions: [2, 0]}, {topic: 'bar', partitions: [1]}], generationId: 7, rackId: ''"],
]
for (const [suffix, desc, input, args] of cases) {
  for (let v = 0; v <= 3; v++) {
    put({
      name: `subscription-v${v}-${suffix}`,
      description: `@platformatic/kafka encodeConsumerProtocolSubscription({version: ${v}, ...}): ${desc}`,
      how: `encodeConsumerProtocolSubscription({ version: ${v}, ${args} })`,
      kind: 'subscription',
      hex: sub({ version: v, ...input }).toString('hex'),
      notes: suffix === 'owned-unsorted' && v === 3
        ? "The encoder sorts topics and owned partitions itself, and writes rack '' as null."
        : undefined,
    })
  }
}
put({
  name: 'subscription-v7-clamped',
  description: '@platformatic/kafka encodeConsumerProtocolSubscription({version: 7}): the version is clamped to 3 before writing',
  how: "encodeConsumerProtocolSubscription({ version: 7, topics: ['foo'] })",
  kind: 'subscription',
  hex: sub({ version: 7, topics: ['foo'] }).toString('hex'),
  notes: 'Versions above 3 are written as 3 and negative versions as 0 (supportedVersion()).',
})
put({
  name: 'subscription-v3-mixed-case-owned',
  description: "@platformatic/kafka subscription v3 with owned partitions on topics 'bar' and 'Foo': owned entries sorted with localeCompare",
  how: "encodeConsumerProtocolSubscription({ version: 3, topics: ['Foo', 'bar'], ownedPartitions: [{topic: 'Foo', partitions: [0]}, {topic: 'bar', partitions: [1]}] })",
  kind: 'subscription',
  hex: sub({ version: 3, topics: ['Foo', 'bar'], ownedPartitions: [{ topic: 'Foo', partitions: [0] }, { topic: 'bar', partitions: [1] }] }).toString('hex'),
  notes: "Topics are sorted with Array.prototype.sort (UTF-16 code units, 'Foo' < 'bar' as in Java), but owned partitions with String.prototype.localeCompare ('bar' < 'Foo'), so Java's canonical order differs.",
})
put({
  name: 'subscription-v1-empty-owned-entry',
  description: '@platformatic/kafka subscription v1 with an owned entry that has no partitions: the entry is dropped',
  how: "encodeConsumerProtocolSubscription({ version: 1, topics: ['foo'], ownedPartitions: [{topic: 'foo', partitions: []}] })",
  kind: 'subscription',
  hex: sub({ version: 1, topics: ['foo'], ownedPartitions: [{ topic: 'foo', partitions: [] }] }).toString('hex'),
})
for (const v of [0, 3]) {
  put({
    name: `assignment-v${v}-basic`,
    description: `@platformatic/kafka encodeConsumerProtocolAssignment({version: ${v}}): foo:[2,0] then bar:[1] given, null userData`,
    how: `encodeConsumerProtocolAssignment({ version: ${v}, assignedPartitions: [{topic: 'foo', partitions: [2, 0]}, {topic: 'bar', partitions: [1]}], userData: null })`,
    kind: 'assignment',
    hex: asg({ version: v, assignedPartitions: [{ topic: 'foo', partitions: [2, 0] }, { topic: 'bar', partitions: [1] }], userData: null }).toString('hex'),
    notes: 'The Consumer writes assignment version 0 for eager protocols and 3 for cooperative-sticky; topics and partitions are sorted by the encoder.',
  })
}
put({
  name: 'assignment-v0-empty',
  description: '@platformatic/kafka encodeConsumerProtocolAssignment({version: 0}) with no partitions and userData undefined',
  how: 'encodeConsumerProtocolAssignment({ version: 0, assignedPartitions: [] })',
  kind: 'assignment',
  hex: asg({ version: 0, assignedPartitions: [] }).toString('hex'),
})
console.log(`platformatic-kafka: wrote ${n} drafts to ${dir}`)
