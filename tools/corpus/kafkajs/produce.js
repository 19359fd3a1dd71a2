'use strict'
// Writes draft corpus vectors produced by kafkajs's own encoders:
// AssignerProtocol.MemberMetadata.encode / MemberAssignment.encode and the
// built-in RoundRobin assigner's protocol()/assign(), for every kafkajs
// release listed in package.json (installed side by side with npm aliases).
//
// Usage: node produce.js <vectors-root>
// writes <vectors-root>/kafkajs-<version>/<name>.json drafts; the Java reader
// (tools/corpus/java-reader) fills in canonical/expect/readers afterwards.
const fs = require('fs')
const path = require('path')

const root = process.argv[2]
if (!root) {
  console.error('usage: node produce.js <vectors-root>')
  process.exit(2)
}

function write(dir, d) {
  fs.mkdirSync(dir, { recursive: true })
  const out = {
    name: d.name,
    description: d.description,
    producer: d.producer,
    kind: d.kind,
    hex: d.hex,
  }
  if (d.notes) out.notes = d.notes
  fs.writeFileSync(path.join(dir, d.name + '.json'), JSON.stringify(out, null, 2) + '\n')
}

// A stand-in cluster for the RoundRobin assigner: foo has partitions 0..2, bar 0..1.
const cluster = {
  findTopicPartitionMetadata: topic =>
    ({ foo: [0, 1, 2], bar: [0, 1] })[topic].map(partitionId => ({ partitionId })),
}

async function produce(pkgName) {
  const version = require(`${pkgName}/package.json`).version
  const kafkajs = require(pkgName)
  const { MemberMetadata, MemberAssignment } = kafkajs.AssignerProtocol
  const dir = path.join(root, `kafkajs-${version}`)
  const prod = how => ({ implementation: 'kafkajs', version, how })
  let n = 0
  const put = d => {
    write(dir, d)
    n++
  }

  // What a kafkajs consumer really sends: the RoundRobin assigner's protocol().
  const assigner = kafkajs.PartitionAssigners.roundRobin({ cluster })
  const proto = assigner.protocol({ topics: ['foo', 'bar'] })
  const bad = assigner.version >= 1
  put({
    name: 'roundrobin-protocol-metadata',
    description: `kafkajs ${version} RoundRobinAssigner.protocol({topics: [foo, bar]}): the JoinGroup metadata a kafkajs consumer sends (assigner version ${assigner.version})`,
    producer: prod("PartitionAssigners.roundRobin({cluster}).protocol({ topics: ['foo', 'bar'] }).metadata"),
    kind: 'subscription',
    hex: proto.metadata.toString('hex'),
    notes: bad
      ? 'Known kafkajs defect before 2.2.2 (issue #1449): RoundRobinAssigner has version 1 and MemberMetadata.encode writes only the v0 fields, so the header says 1 but OwnedPartitions is missing. Userdata defaults to an empty buffer.'
      : 'Since kafkajs 2.2.2 the RoundRobinAssigner declares version 0. Userdata defaults to an empty (non-null) buffer.',
  })
  const assigned = await assigner.assign({
    members: [{ memberId: 'm1' }, { memberId: 'm2' }],
    topics: ['foo', 'bar'],
  })
  const m1 = assigned.find(a => a.memberId === 'm1')
  put({
    name: 'roundrobin-assignment',
    description: `kafkajs ${version} RoundRobinAssigner.assign: member m1 of [m1, m2] over foo(3 partitions), bar(2) gets foo:[0,2] bar:[1] (assignment version ${assigner.version})`,
    producer: prod("PartitionAssigners.roundRobin({cluster}).assign({ members: [m1, m2], topics: ['foo', 'bar'] }) -> m1.memberAssignment"),
    kind: 'assignment',
    hex: m1.memberAssignment.toString('hex'),
    notes: 'Assignment bodies are identical for v0..v3; the default userData is an empty buffer, not null.',
  })

  if (pkgName !== 'kafkajs') return n // older release: only what differs
  const subNote =
    'kafkajs MemberMetadata.encode writes only version, topics and userData whatever the version says; for version >= 1 the payload lacks OwnedPartitions (and generation/rack), which Java rejects.'
  for (let v = 0; v <= 3; v++) {
    put({
      name: `member-metadata-v${v}-basic`,
      description: `kafkajs AssignerProtocol.MemberMetadata.encode({version: ${v}, topics: [foo, bar]}) with the default userData (empty buffer)`,
      producer: prod(`AssignerProtocol.MemberMetadata.encode({ version: ${v}, topics: ['foo', 'bar'] })`),
      kind: 'subscription',
      hex: MemberMetadata.encode({ version: v, topics: ['foo', 'bar'] }).toString('hex'),
      notes: v === 0 ? undefined : subNote,
    })
  }
  put({
    name: 'member-metadata-v0-null-user-data',
    description: 'kafkajs AssignerProtocol.MemberMetadata.encode({version: 0, topics: [foo], userData: null})',
    producer: prod("AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['foo'], userData: null })"),
    kind: 'subscription',
    hex: MemberMetadata.encode({ version: 0, topics: ['foo'], userData: null }).toString('hex'),
  })
  put({
    name: 'member-metadata-v0-user-data',
    description: 'kafkajs AssignerProtocol.MemberMetadata.encode({version: 0, topics: [foo], userData: 010203})',
    producer: prod("AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['foo'], userData: Buffer.from([1, 2, 3]) })"),
    kind: 'subscription',
    hex: MemberMetadata.encode({ version: 0, topics: ['foo'], userData: Buffer.from([1, 2, 3]) }).toString('hex'),
  })
  for (let v = 0; v <= 3; v++) {
    put({
      name: `member-assignment-v${v}-basic`,
      description: `kafkajs AssignerProtocol.MemberAssignment.encode({version: ${v}, assignment: {foo: [0, 2], bar: [1]}}) with the default userData (empty buffer)`,
      producer: prod(`AssignerProtocol.MemberAssignment.encode({ version: ${v}, assignment: { foo: [0, 2], bar: [1] } })`),
      kind: 'assignment',
      hex: MemberAssignment.encode({ version: v, assignment: { foo: [0, 2], bar: [1] } }).toString('hex'),
    })
  }
  put({
    name: 'member-assignment-v0-null-user-data-empty',
    description: 'kafkajs AssignerProtocol.MemberAssignment.encode({version: 0, assignment: {}, userData: null})',
    producer: prod('AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: {}, userData: null })'),
    kind: 'assignment',
    hex: MemberAssignment.encode({ version: 0, assignment: {}, userData: null }).toString('hex'),
  })
  put({
    name: 'member-assignment-v0-numeric-topic-order',
    description: "kafkajs MemberAssignment.encode with assignment {foo: [0], '10': [1], bar: [2]}: JS puts integer-like keys first, so '10' is written before foo",
    producer: prod("AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { foo: [0], '10': [1], bar: [2] } })"),
    kind: 'assignment',
    hex: MemberAssignment.encode({ version: 0, assignment: { foo: [0], 10: [1], bar: [2] } }).toString('hex'),
    notes: 'Object.keys order: integer-like topic names come first in ascending numeric order, then the rest in insertion order.',
  })
  return n
}

;(async () => {
  for (const pkg of Object.keys(require('./package.json').dependencies)) {
    const n = await produce(pkg)
    console.log(`kafkajs (${pkg}): wrote ${n} drafts`)
  }
})().catch(e => {
  console.error(e)
  process.exit(1)
})
