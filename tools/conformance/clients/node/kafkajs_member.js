// One kafkajs consumer-group member for the conformance captures (tools/conformance/live.sh):
// joins GROUP on TOPIC with kafkajs's assigner, runs for SECONDS, then disconnects (LeaveGroup).
//
//   node kafkajs_member.js BOOTSTRAP GROUP TOPIC CLIENT_ID roundrobin SECONDS
// kafkajs 2.x ships one assigner, its round robin (protocol name `RoundRobinAssigner`).
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')

const [bootstrap, group, topic, clientId, assignor, seconds] = process.argv.slice(2)
if (assignor !== 'roundrobin') throw new Error(`kafkajs has no assigner ${assignor}`)
const kafka = new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING })
const consumer = kafka.consumer({
  groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000,
  partitionAssigners: [PartitionAssigners.roundRobin],
})
;(async () => {
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
  await new Promise(resolve => setTimeout(resolve, Number(seconds) * 1000))
  await consumer.disconnect()
  process.exit(0)
})().catch(e => { console.error(e); process.exit(1) })
