//! A structural walk over a response body, run before `kafka-protocol` decodes it.
//!
//! `kafka-protocol` pre-allocates every array by the count it reads (`Vec::with_capacity(n)`), so
//! a hostile count of 2^31 would ask for hundreds of gigabytes and abort the process. The walk
//! checks every length and count against the bytes actually present, visiting every element,
//! so that what `kafka-protocol` then allocates is proportional to what the broker really sent.
//! The schemas below describe the responses of the APIs this client sends (DescribeConfigs too), at every version
//! `kafka-protocol` 0.18 decodes; the tests check each against `kafka-protocol`'s own encoder.

/// The wire type of one field.
#[derive(Clone, Copy)]
enum Ty {
    /// Fixed width: integers, booleans, UUIDs.
    Fixed(usize),
    /// A (nullable) string: i16 length, or compact (unsigned varint length + 1) when flexible.
    Str,
    /// (Nullable) bytes: i32 length, or compact when flexible.
    Bytes,
    /// An array of structs.
    Array(&'static Schema),
    /// An array of fixed-width values (`[]int32`).
    FixedArray(usize),
    /// An array of strings.
    StrArray,
    /// A nested struct (not an array).
    Struct(&'static Schema),
}

#[derive(Clone, Copy)]
struct Field {
    since: i16,
    until: i16,
    ty: Ty,
}

/// A struct: its fields in order, then (in flexible versions) its tagged fields.
struct Schema {
    fields: &'static [Field],
    tags: &'static [(u32, Field)],
}

const fn all(ty: Ty) -> Field {
    Field { since: 0, until: i16::MAX, ty }
}

const fn since(since: i16, ty: Ty) -> Field {
    Field { since, until: i16::MAX, ty }
}

const fn range(since: i16, until: i16, ty: Ty) -> Field {
    Field { since, until, ty }
}

const I8: Ty = Ty::Fixed(1);
const BOOL: Ty = Ty::Fixed(1);
const I16: Ty = Ty::Fixed(2);
const I32: Ty = Ty::Fixed(4);
const I64: Ty = Ty::Fixed(8);
const UUID: Ty = Ty::Fixed(16);
const I32S: Ty = Ty::FixedArray(4);

const fn plain(fields: &'static [Field]) -> Schema {
    Schema { fields, tags: &[] }
}

// ApiVersions (flexible from v3).
static API_VERSION: Schema = plain(&[all(I16), all(I16), all(I16)]);
static FEATURE_KEY: Schema = plain(&[all(Ty::Str), all(I16), all(I16)]);
static API_VERSIONS: Schema = Schema {
    fields: &[all(I16), all(Ty::Array(&API_VERSION)), since(1, I32)],
    tags: &[
        (0, since(3, Ty::Array(&FEATURE_KEY))),
        (1, since(3, I64)),
        (2, since(3, Ty::Array(&FEATURE_KEY))),
        (3, since(3, BOOL)),
    ],
};

// Metadata (flexible from v9).
static METADATA_BROKER: Schema = plain(&[all(I32), all(Ty::Str), all(I32), since(1, Ty::Str)]);
static METADATA_PARTITION: Schema =
    plain(&[all(I16), all(I32), all(I32), since(7, I32), all(I32S), all(I32S), since(5, I32S)]);
static METADATA_TOPIC: Schema = plain(&[
    all(I16),
    all(Ty::Str),
    since(10, UUID),
    since(1, BOOL),
    all(Ty::Array(&METADATA_PARTITION)),
    since(8, I32),
]);
static METADATA: Schema = plain(&[
    since(3, I32),
    all(Ty::Array(&METADATA_BROKER)),
    since(2, Ty::Str),
    since(1, I32),
    all(Ty::Array(&METADATA_TOPIC)),
    range(8, 10, I32),
    since(13, I16),
]);

// FindCoordinator (flexible from v3; batched from v4).
static COORDINATOR: Schema = plain(&[all(Ty::Str), all(I32), all(Ty::Str), all(I32), all(I16), all(Ty::Str)]);
static FIND_COORDINATOR: Schema = plain(&[
    since(1, I32),
    range(0, 3, I16),
    range(1, 3, Ty::Str),
    range(0, 3, I32),
    range(0, 3, Ty::Str),
    range(0, 3, I32),
    since(4, Ty::Array(&COORDINATOR)),
]);

// ListGroups (flexible from v3).
static LISTED_GROUP: Schema = plain(&[all(Ty::Str), all(Ty::Str), since(4, Ty::Str), since(5, Ty::Str)]);
static LIST_GROUPS: Schema = plain(&[since(1, I32), all(I16), all(Ty::Array(&LISTED_GROUP))]);

// DescribeGroups (flexible from v5).
static DESCRIBED_MEMBER: Schema =
    plain(&[all(Ty::Str), since(4, Ty::Str), all(Ty::Str), all(Ty::Str), all(Ty::Bytes), all(Ty::Bytes)]);
static DESCRIBED_GROUP: Schema = plain(&[
    all(I16),
    since(6, Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::Array(&DESCRIBED_MEMBER)),
    since(3, I32),
]);
static DESCRIBE_GROUPS: Schema = plain(&[since(1, I32), all(Ty::Array(&DESCRIBED_GROUP))]);

// ConsumerGroupDescribe (flexible at every version).
static CG_TOPIC_PARTITIONS: Schema = plain(&[all(UUID), all(Ty::Str), all(I32S)]);
static CG_ASSIGNMENT: Schema = plain(&[all(Ty::Array(&CG_TOPIC_PARTITIONS))]);
static CG_MEMBER: Schema = plain(&[
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    all(I32),
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::StrArray),
    all(Ty::Str),
    all(Ty::Struct(&CG_ASSIGNMENT)),
    all(Ty::Struct(&CG_ASSIGNMENT)),
    since(1, I8),
]);
static CG_GROUP: Schema = plain(&[
    all(I16),
    all(Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    all(I32),
    all(I32),
    all(Ty::Str),
    all(Ty::Array(&CG_MEMBER)),
    all(I32),
]);
static CONSUMER_GROUP_DESCRIBE: Schema = plain(&[all(I32), all(Ty::Array(&CG_GROUP))]);

// The group membership APIs.
static JOIN_MEMBER: Schema = plain(&[all(Ty::Str), since(5, Ty::Str), all(Ty::Bytes)]);
static JOIN_GROUP: Schema = plain(&[
    since(2, I32),
    all(I16),
    all(I32),
    since(7, Ty::Str),
    all(Ty::Str),
    all(Ty::Str),
    since(9, BOOL),
    all(Ty::Str),
    all(Ty::Array(&JOIN_MEMBER)),
]);
static SYNC_GROUP: Schema = plain(&[since(1, I32), all(I16), since(5, Ty::Str), since(5, Ty::Str), all(Ty::Bytes)]);
static HEARTBEAT: Schema = plain(&[since(1, I32), all(I16)]);
static LEAVE_MEMBER: Schema = plain(&[all(Ty::Str), all(Ty::Str), all(I16)]);
static LEAVE_GROUP: Schema = plain(&[since(1, I32), all(I16), since(3, Ty::Array(&LEAVE_MEMBER))]);

// DescribeConfigs (flexible from v4).
static CONFIG_SYNONYM: Schema = plain(&[all(Ty::Str), all(Ty::Str), all(I8)]);
static CONFIG_ENTRY: Schema = plain(&[
    all(Ty::Str),
    all(Ty::Str),
    all(BOOL),
    range(0, 0, BOOL),
    since(1, I8),
    all(BOOL),
    since(1, Ty::Array(&CONFIG_SYNONYM)),
    since(3, I8),
    since(3, Ty::Str),
]);
static CONFIG_RESULT: Schema = plain(&[all(I16), all(Ty::Str), all(I8), all(Ty::Str), all(Ty::Array(&CONFIG_ENTRY))]);
static DESCRIBE_CONFIGS: Schema = plain(&[all(I32), all(Ty::Array(&CONFIG_RESULT))]);
// The write actions: OffsetCommit (flexible from v8; topic ids from v10), OffsetDelete (v0
// only), DeleteGroups (flexible from v2).
static OFFSET_COMMIT_PARTITION: Schema = plain(&[all(I32), all(I16)]);
static OFFSET_COMMIT_TOPIC: Schema =
    plain(&[range(0, 9, Ty::Str), since(10, UUID), all(Ty::Array(&OFFSET_COMMIT_PARTITION))]);
static OFFSET_COMMIT: Schema = plain(&[since(3, I32), all(Ty::Array(&OFFSET_COMMIT_TOPIC))]);
static OFFSET_DELETE_PARTITION: Schema = plain(&[all(I32), all(I16)]);
static OFFSET_DELETE_TOPIC: Schema = plain(&[all(Ty::Str), all(Ty::Array(&OFFSET_DELETE_PARTITION))]);
static OFFSET_DELETE: Schema = plain(&[all(I16), all(I32), all(Ty::Array(&OFFSET_DELETE_TOPIC))]);
static DELETED_GROUP: Schema = plain(&[all(Ty::Str), all(I16)]);
static DELETE_GROUPS: Schema = plain(&[all(I32), all(Ty::Array(&DELETED_GROUP))]);
// OffsetFetch (flexible from v6; groups batched from v8; topic ids from v10).
static OFFSET_FETCH_PARTITION: Schema = plain(&[all(I32), all(I64), since(5, I32), all(Ty::Str), all(I16)]);
static OFFSET_FETCH_TOPIC: Schema = plain(&[all(Ty::Str), all(Ty::Array(&OFFSET_FETCH_PARTITION))]);
static OFFSET_FETCH_GROUP_PARTITION: Schema = plain(&[all(I32), all(I64), all(I32), all(Ty::Str), all(I16)]);
static OFFSET_FETCH_GROUP_TOPIC: Schema =
    plain(&[range(0, 9, Ty::Str), since(10, UUID), all(Ty::Array(&OFFSET_FETCH_GROUP_PARTITION))]);
static OFFSET_FETCH_GROUP: Schema = plain(&[all(Ty::Str), all(Ty::Array(&OFFSET_FETCH_GROUP_TOPIC)), all(I16)]);
static OFFSET_FETCH: Schema = plain(&[
    since(3, I32),
    range(0, 7, Ty::Array(&OFFSET_FETCH_TOPIC)),
    range(2, 7, I16),
    since(8, Ty::Array(&OFFSET_FETCH_GROUP)),
]);

// ListOffsets (flexible from v6; kafka-protocol decodes v1+).
static LIST_OFFSETS_PARTITION: Schema = plain(&[all(I32), all(I16), all(I64), all(I64), since(4, I32)]);
static LIST_OFFSETS_TOPIC: Schema = plain(&[all(Ty::Str), all(Ty::Array(&LIST_OFFSETS_PARTITION))]);
static LIST_OFFSETS: Schema = plain(&[since(2, I32), all(Ty::Array(&LIST_OFFSETS_TOPIC))]);

// Fetch (flexible from v12; topic ids instead of names from v13; kafka-protocol decodes v4+).
static FETCH_ABORTED: Schema = plain(&[all(I64), all(I64)]);
static FETCH_EPOCH_END: Schema = plain(&[all(I32), all(I64)]);
static FETCH_LEADER: Schema = plain(&[all(I32), all(I32)]);
static FETCH_SNAPSHOT: Schema = plain(&[all(I64), all(I32)]);
static FETCH_PARTITION: Schema = Schema {
    fields: &[
        all(I32),
        all(I16),
        all(I64),
        all(I64),
        since(5, I64),
        all(Ty::Array(&FETCH_ABORTED)),
        since(11, I32),
        all(Ty::Bytes),
    ],
    tags: &[
        (0, since(12, Ty::Struct(&FETCH_EPOCH_END))),
        (1, since(12, Ty::Struct(&FETCH_LEADER))),
        (2, since(12, Ty::Struct(&FETCH_SNAPSHOT))),
    ],
};
static FETCH_TOPIC: Schema = plain(&[range(0, 12, Ty::Str), since(13, UUID), all(Ty::Array(&FETCH_PARTITION))]);
static FETCH_NODE: Schema = plain(&[all(I32), all(Ty::Str), all(I32), all(Ty::Str)]);
static FETCH: Schema = Schema {
    fields: &[all(I32), since(7, I16), since(7, I32), all(Ty::Array(&FETCH_TOPIC))],
    tags: &[(0, since(16, Ty::Array(&FETCH_NODE)))],
};

// SASL.
static SASL_HANDSHAKE: Schema = plain(&[all(I16), all(Ty::StrArray)]);
static SASL_AUTHENTICATE: Schema = plain(&[all(I16), all(Ty::Str), all(Ty::Bytes), since(1, I64)]);

/// The response schema of an API key and the first flexible version, for the APIs this client
/// checks.
fn response_schema(api_key: i16) -> Option<(&'static Schema, i16)> {
    Some(match api_key {
        1 => (&FETCH, 12),
        2 => (&LIST_OFFSETS, 6),
        3 => (&METADATA, 9),
        8 => (&OFFSET_COMMIT, 8),
        9 => (&OFFSET_FETCH, 6),
        10 => (&FIND_COORDINATOR, 3),
        11 => (&JOIN_GROUP, 6),
        12 => (&HEARTBEAT, 4),
        13 => (&LEAVE_GROUP, 4),
        14 => (&SYNC_GROUP, 4),
        15 => (&DESCRIBE_GROUPS, 5),
        16 => (&LIST_GROUPS, 3),
        17 => (&SASL_HANDSHAKE, i16::MAX),
        18 => (&API_VERSIONS, 3),
        32 => (&DESCRIBE_CONFIGS, 4),
        36 => (&SASL_AUTHENTICATE, 2),
        42 => (&DELETE_GROUPS, 2),
        47 => (&OFFSET_DELETE, i16::MAX),
        69 => (&CONSUMER_GROUP_DESCRIBE, 0),
        _ => return None,
    })
}

/// Checks a response body (after the response header) and returns how many bytes the message
/// takes (trailing bytes are left to the caller: Java ignores them). `Ok(0)` for an API without
/// a schema. The error says what was wrong and at which byte.
pub(crate) fn check_response(api_key: i16, version: i16, body: &[u8]) -> Result<usize, String> {
    let Some((schema, flexible_from)) = response_schema(api_key) else { return Ok(0) };
    let mut walk = Walk { b: body, at: 0, flexible: version >= flexible_from, version };
    walk.schema(schema, 0)?;
    Ok(walk.at)
}

/// Checks a response header: a correlation id, and a tag section in header version 1.
pub(crate) fn check_header(header_version: i16, frame: &[u8]) -> Result<usize, String> {
    let mut walk = Walk { b: frame, at: 0, flexible: header_version >= 1, version: 0 };
    walk.fixed(4)?;
    walk.tags(&[], 0)?;
    Ok(walk.at)
}

/// Nesting depth beyond which a walk stops (the schemas nest four deep at most).
const MAX_DEPTH: usize = 8;

struct Walk<'a> {
    b: &'a [u8],
    at: usize,
    flexible: bool,
    version: i16,
}

impl Walk<'_> {
    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }

    fn fixed(&mut self, n: usize) -> Result<(), String> {
        if n > self.remaining() {
            return Err(format!("truncated at byte {}: needed {n} bytes, {} left", self.at, self.remaining()));
        }
        self.at += n;
        Ok(())
    }

    fn be(&mut self, width: usize) -> Result<i64, String> {
        let start = self.at;
        self.fixed(width)?;
        let bytes = &self.b[start..self.at];
        Ok(match width {
            2 => i64::from(i16::from_be_bytes([bytes[0], bytes[1]])),
            _ => i64::from(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        })
    }

    /// An unsigned varint of at most 32 bits, as Kafka writes them.
    fn varint(&mut self) -> Result<u32, String> {
        let start = self.at;
        let mut value = 0u32;
        for shift in 0..5 {
            let Some(&byte) = self.b.get(self.at) else {
                return Err(format!("truncated varint at byte {start}"));
            };
            self.at += 1;
            if shift == 4 && byte > 0x0f {
                return Err(format!("varint longer than 32 bits at byte {start}"));
            }
            value |= u32::from(byte & 0x7f) << (7 * shift);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!("varint longer than 32 bits at byte {start}"))
    }

    /// A length or count: `None` for null.
    fn length(&mut self, width: usize) -> Result<Option<usize>, String> {
        let start = self.at;
        let n = if self.flexible { i64::from(self.varint()?) - 1 } else { self.be(width)? };
        match n {
            -1 => Ok(None),
            n if n < -1 => Err(format!("negative length {n} at byte {start}")),
            n => {
                let n = n as usize;
                if n > self.remaining() {
                    return Err(format!(
                        "length or count {n} at byte {start} exceeds the {} bytes left",
                        self.remaining()
                    ));
                }
                Ok(Some(n))
            }
        }
    }

    fn ty(&mut self, ty: Ty, depth: usize) -> Result<(), String> {
        match ty {
            Ty::Fixed(n) => self.fixed(n),
            Ty::Str => match self.length(2)? {
                Some(n) => self.fixed(n),
                None => Ok(()),
            },
            Ty::Bytes => match self.length(4)? {
                Some(n) => self.fixed(n),
                None => Ok(()),
            },
            Ty::FixedArray(width) => match self.length(4)? {
                Some(n) => self.fixed(n.checked_mul(width).ok_or("array size overflows")?),
                None => Ok(()),
            },
            Ty::StrArray => {
                for _ in 0..self.length(4)?.unwrap_or(0) {
                    self.ty(Ty::Str, depth)?;
                }
                Ok(())
            }
            Ty::Array(schema) => {
                for _ in 0..self.length(4)?.unwrap_or(0) {
                    let before = self.at;
                    self.schema(schema, depth + 1)?;
                    if self.at == before {
                        return Err(format!("empty array element at byte {before}"));
                    }
                }
                Ok(())
            }
            Ty::Struct(schema) => self.schema(schema, depth + 1),
        }
    }

    fn schema(&mut self, schema: &Schema, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("nested too deep".into());
        }
        for field in schema.fields {
            if (field.since..=field.until).contains(&self.version) {
                self.ty(field.ty, depth)?;
            }
        }
        self.tags(schema.tags, depth)
    }

    /// A tag section (flexible versions only). A known tag's content must fill its declared
    /// size exactly, because `kafka-protocol` reads it from the message, not from the size.
    fn tags(&mut self, known: &[(u32, Field)], depth: usize) -> Result<(), String> {
        if !self.flexible {
            return Ok(());
        }
        let start = self.at;
        let count = self.varint()? as usize;
        if count > self.remaining() {
            return Err(format!("{count} tagged fields at byte {start} exceed the bytes left"));
        }
        for _ in 0..count {
            let tag = self.varint()?;
            let size = self.varint()? as usize;
            let content_start = self.at;
            match known.iter().find(|(t, f)| *t == tag && (f.since..=f.until).contains(&self.version)) {
                Some((_, field)) => {
                    if size > self.remaining() {
                        return Err(format!("tagged field {tag} at byte {content_start} exceeds the bytes left"));
                    }
                    let end = content_start + size;
                    let mut inner = Walk { b: &self.b[..end], at: content_start, ..*self };
                    inner.ty(field.ty, depth)?;
                    if inner.at != end {
                        return Err(format!(
                            "tagged field {tag} at byte {content_start} does not fill its {size} bytes"
                        ));
                    }
                    self.at = end;
                }
                None => self.fixed(size)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use kafka_protocol::messages::api_versions_response::{ApiVersion, FinalizedFeatureKey, SupportedFeatureKey};
    use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
    use kafka_protocol::messages::find_coordinator_response::Coordinator;
    use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
    use kafka_protocol::messages::list_groups_response::ListedGroup;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::{Encodable, Message, StrBytes};

    fn s(text: &str) -> StrBytes {
        StrBytes::from_string(text.to_string())
    }

    fn encode<M: Encodable>(message: &M, version: i16) -> Vec<u8> {
        let mut buf = BytesMut::new();
        message.encode(&mut buf, version).unwrap();
        buf.to_vec()
    }

    /// Every version's encoding is accepted, and each truncation of it is refused.
    fn accepts_every_version<M: Encodable + Message>(api_key: i16, build: impl Fn(i16) -> M) {
        for version in M::VERSIONS.min..=M::VERSIONS.max {
            let bytes = encode(&build(version), version);
            let used =
                check_response(api_key, version, &bytes).unwrap_or_else(|e| panic!("api {api_key} v{version}: {e}"));
            assert_eq!(used, bytes.len(), "api {api_key} v{version} walks the whole message");
            for cut in 0..bytes.len() {
                assert!(
                    check_response(api_key, version, &bytes[..cut]).is_err(),
                    "api {api_key} v{version} cut at {cut} of {}",
                    bytes.len()
                );
            }
        }
    }

    #[test]
    fn api_versions() {
        accepts_every_version(18, |v| {
            let mut r = ApiVersionsResponse::default().with_api_keys(vec![
                ApiVersion::default()
                    .with_api_key(3)
                    .with_max_version(12);
                2
            ]);
            if v >= 1 {
                r.throttle_time_ms = 5;
            }
            if v >= 3 {
                r.supported_features =
                    vec![SupportedFeatureKey::default().with_name(s("metadata.version")).with_max_version(20)];
                r.finalized_features_epoch = 7;
                r.finalized_features =
                    vec![FinalizedFeatureKey::default().with_name(s("metadata.version")).with_max_version_level(20)];
                r.zk_migration_ready = true;
            }
            r
        });
    }

    #[test]
    fn metadata() {
        accepts_every_version(3, |v| {
            let partition = MetadataResponsePartition::default()
                .with_partition_index(1)
                .with_replica_nodes(vec![1.into(), 2.into()])
                .with_isr_nodes(vec![1.into()])
                .with_offline_replicas(if v >= 5 { vec![2.into()] } else { vec![] });
            let topic = MetadataResponseTopic::default()
                .with_name(Some(TopicName(s("orders"))))
                .with_partitions(vec![partition.clone(), partition]);
            let broker = MetadataResponseBroker::default()
                .with_node_id(1.into())
                .with_host(s("localhost"))
                .with_port(9092)
                .with_rack(if v >= 1 { Some(s("r1")) } else { None });
            MetadataResponse::default()
                .with_brokers(vec![broker.clone(), broker])
                .with_cluster_id(if v >= 2 { Some(s("c")) } else { None })
                .with_topics(vec![topic])
        });
    }

    #[test]
    fn find_coordinator() {
        accepts_every_version(10, |v| {
            if v >= 4 {
                FindCoordinatorResponse::default().with_coordinators(vec![
                    Coordinator::default()
                        .with_key(s("g"))
                        .with_host(s("h"))
                        .with_error_message(Some(s("m")));
                    2
                ])
            } else {
                FindCoordinatorResponse::default().with_host(s("h")).with_node_id(2.into())
            }
        });
    }

    #[test]
    fn list_and_describe_groups() {
        accepts_every_version(16, |v| {
            let mut g = ListedGroup::default().with_group_id(GroupId(s("g"))).with_protocol_type(s("consumer"));
            if v >= 4 {
                g.group_state = s("Stable");
            }
            if v >= 5 {
                g.group_type = s("classic");
            }
            ListGroupsResponse::default().with_groups(vec![g.clone(), g])
        });
        accepts_every_version(15, |v| {
            let mut m = DescribedGroupMember::default()
                .with_member_id(s("m"))
                .with_client_id(s("c"))
                .with_member_metadata(vec![0, 3, 0].into())
                .with_member_assignment(vec![0, 3].into());
            if v >= 4 {
                m.group_instance_id = Some(s("i"));
            }
            let mut g = DescribedGroup::default()
                .with_group_id(GroupId(s("g")))
                .with_protocol_data(s("range"))
                .with_members(vec![m.clone(), m]);
            if v >= 6 {
                g.error_message = Some(s("e"));
            }
            DescribeGroupsResponse::default().with_groups(vec![g])
        });
    }

    #[test]
    fn consumer_group_describe() {
        use kafka_protocol::messages::consumer_group_describe_response::{
            Assignment, DescribedGroup, Member, TopicPartitions,
        };
        accepts_every_version(69, |v| {
            let tp = TopicPartitions::default().with_topic_name(TopicName(s("t"))).with_partitions(vec![0, 1]);
            let assignment = Assignment::default().with_topic_partitions(vec![tp.clone(), tp]);
            let mut member = Member::default()
                .with_member_id(s("m"))
                .with_subscribed_topic_names(vec![TopicName(s("t")), TopicName(s("u"))])
                .with_assignment(assignment.clone())
                .with_target_assignment(assignment);
            if v >= 1 {
                member.member_type = 1;
            }
            ConsumerGroupDescribeResponse::default()
                .with_groups(vec![DescribedGroup::default().with_group_id(GroupId(s("g"))).with_members(vec![member])])
        });
    }

    #[test]
    fn describe_configs() {
        use kafka_protocol::messages::describe_configs_response::{
            DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
        };
        accepts_every_version(32, |v| {
            let mut entry = DescribeConfigsResourceResult::default()
                .with_name(s("group.consumer.max.size"))
                .with_value(Some(s("2")));
            if v >= 1 {
                entry.synonyms = vec![DescribeConfigsSynonym::default().with_name(s("n")).with_value(Some(s("v")))];
            }
            if v >= 3 {
                entry.documentation = Some(s("doc"));
            }
            let sensitive = DescribeConfigsResourceResult::default().with_name(s("secret")).with_is_sensitive(true);
            DescribeConfigsResponse::default().with_results(vec![DescribeConfigsResult::default()
                .with_resource_name(s("1"))
                .with_error_message(Some(s("e")))
                .with_configs(vec![entry, sensitive])])
        });
    }

    #[test]
    fn group_membership_and_sasl() {
        accepts_every_version(11, |v| {
            let mut m = JoinGroupResponseMember::default().with_member_id(s("m")).with_metadata(vec![1, 2].into());
            if v >= 5 {
                m.group_instance_id = Some(s("i"));
            }
            let mut r = JoinGroupResponse::default().with_protocol_name(Some(s("range"))).with_members(vec![m]);
            if v >= 7 {
                r.protocol_type = Some(s("consumer"));
            }
            r
        });
        accepts_every_version(14, |_| SyncGroupResponse::default().with_assignment(vec![0, 1, 2].into()));
        accepts_every_version(12, |_| HeartbeatResponse::default().with_error_code(27));
        accepts_every_version(13, |v| {
            let members = if v >= 3 {
                vec![kafka_protocol::messages::leave_group_response::MemberResponse::default()]
            } else {
                vec![]
            };
            LeaveGroupResponse::default().with_members(members)
        });
        accepts_every_version(17, |_| {
            SaslHandshakeResponse::default().with_mechanisms(vec![s("PLAIN"), s("SCRAM-SHA-512")])
        });
        accepts_every_version(36, |_| SaslAuthenticateResponse::default().with_auth_bytes(vec![1, 2, 3].into()));
    }

    #[test]
    fn write_actions() {
        use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
        use kafka_protocol::messages::offset_commit_response::{
            OffsetCommitResponsePartition, OffsetCommitResponseTopic,
        };
        use kafka_protocol::messages::offset_delete_response::{
            OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
        };
        accepts_every_version(8, |v| {
            let p = OffsetCommitResponsePartition::default().with_partition_index(2).with_error_code(25);
            let mut t = OffsetCommitResponseTopic::default().with_partitions(vec![p.clone(), p]);
            // v10+ carries the topic id (16 bytes, zeros here) instead of the name.
            if v <= 9 {
                t.name = TopicName(s("orders"));
            }
            OffsetCommitResponse::default().with_throttle_time_ms(3).with_topics(vec![t.clone(), t])
        });
        accepts_every_version(47, |_| {
            let p = OffsetDeleteResponsePartition::default().with_partition_index(1).with_error_code(86);
            let t = OffsetDeleteResponseTopic::default()
                .with_name(TopicName(s("orders")))
                .with_partitions(vec![p.clone(), p]);
            OffsetDeleteResponse::default().with_topics(vec![t.clone(), t])
        });
        accepts_every_version(42, |_| {
            let g = DeletableGroupResult::default().with_group_id(GroupId(s("g"))).with_error_code(68);
            DeleteGroupsResponse::default().with_results(vec![g.clone(), g])
        });
        // A hostile topic count: OffsetDelete v0, error 0, throttle 0, then 2^31-1 topics.
        let body = [0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff];
        assert!(check_response(47, 0, &body).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn offset_fetch_and_list_offsets() {
        use kafka_protocol::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
        use kafka_protocol::messages::offset_fetch_response::*;
        accepts_every_version(9, |v| {
            if v >= 8 {
                let p = OffsetFetchResponsePartitions::default()
                    .with_partition_index(1)
                    .with_committed_offset(42)
                    .with_metadata(Some(s("m")));
                let mut t = OffsetFetchResponseTopics::default().with_partitions(vec![p.clone(), p]);
                if v <= 9 {
                    t.name = TopicName(s("orders"));
                }
                let g =
                    OffsetFetchResponseGroup::default().with_group_id(GroupId(s("g"))).with_topics(vec![t.clone(), t]);
                OffsetFetchResponse::default().with_groups(vec![g.clone(), g])
            } else {
                let p = OffsetFetchResponsePartition::default()
                    .with_partition_index(1)
                    .with_committed_offset(42)
                    .with_metadata(Some(s("m")));
                let t = OffsetFetchResponseTopic::default()
                    .with_name(TopicName(s("orders")))
                    .with_partitions(vec![p.clone(), p]);
                OffsetFetchResponse::default().with_topics(vec![t.clone(), t])
            }
        });
        accepts_every_version(2, |_| {
            let p = ListOffsetsPartitionResponse::default().with_partition_index(3).with_offset(7);
            let t = ListOffsetsTopicResponse::default()
                .with_name(TopicName(s("orders")))
                .with_partitions(vec![p.clone(), p]);
            ListOffsetsResponse::default().with_topics(vec![t.clone(), t])
        });
        // A hostile partition count: ListOffsets v1, one topic "t", then 2^31-1 partitions.
        let body = [0, 0, 0, 1, 0, 1, b't', 0x7f, 0xff, 0xff, 0xff];
        assert!(check_response(2, 1, &body).unwrap_err().contains("exceeds"));
        // OffsetFetch v8: throttle, then a varint count of 2^28 groups.
        let body = [0, 0, 0, 0, 0x81, 0x80, 0x80, 0x80, 0x01];
        assert!(check_response(9, 8, &body).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn fetch() {
        use kafka_protocol::messages::fetch_response::{
            AbortedTransaction, EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
            SnapshotId,
        };
        accepts_every_version(1, |v| {
            let mut p = PartitionData::default()
                .with_partition_index(3)
                .with_high_watermark(9)
                .with_aborted_transactions(Some(vec![AbortedTransaction::default().with_first_offset(4); 2]))
                .with_records(Some(bytes::Bytes::from_static(&[1, 2, 3, 4])));
            if v >= 12 {
                p.diverging_epoch = EpochEndOffset::default().with_epoch(2).with_end_offset(7);
                p.current_leader = LeaderIdAndEpoch::default().with_leader_id(1.into()).with_leader_epoch(3);
                p.snapshot_id = SnapshotId::default().with_end_offset(5).with_epoch(1);
            }
            let mut t = FetchableTopicResponse::default().with_partitions(vec![p.clone(), p]);
            if v <= 12 {
                t.topic = TopicName(s("__consumer_offsets"));
            }
            let mut r = FetchResponse::default().with_responses(vec![t.clone(), t]);
            if v >= 16 {
                r.node_endpoints = vec![NodeEndpoint::default().with_host(s("h")).with_rack(Some(s("r")))];
            }
            r
        });
        // Fetch v12: throttle, error, session, one topic "t", then a varint count of 2^28
        // partitions.
        let body = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, b't', 0x81, 0x80, 0x80, 0x80, 0x01];
        assert!(check_response(1, 12, &body).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn hostile_counts_are_refused() {
        // ListGroups v0: throttle-less, error 0, then 2^31-1 groups in 4 bytes.
        let body = [0, 0, 0x7f, 0xff, 0xff, 0xff];
        let e = check_response(16, 0, &body).unwrap_err();
        assert!(e.contains("exceeds"), "{e}");
        // The flexible form: a varint count of 2^32-2 elements.
        let body = [0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(check_response(16, 3, &body).is_err());
        // A varint longer than 32 bits.
        let body = [0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(check_response(16, 3, &body).unwrap_err().contains("32 bits"));
        // A negative string length other than -1.
        assert!(check_response(17, 0, &[0, 0, 0, 0, 0, 1, 0xff, 0xfe]).unwrap_err().contains("negative"));
        // A known tag whose content is shorter than its declared size: ApiVersions v3, no
        // api keys, throttle 0, one tag (finalized epoch) of size 9 holding an i64 and one byte.
        let mut body = vec![0, 0, 1, 0, 0, 0, 0, 1, 1, 9];
        body.extend_from_slice(&[0; 9]);
        body.push(0);
        assert!(check_response(18, 3, &body).unwrap_err().contains("does not fill"));
    }

    #[test]
    fn headers() {
        assert_eq!(check_header(0, &[0, 0, 0, 1, 9]), Ok(4));
        assert_eq!(check_header(1, &[0, 0, 0, 1, 0, 9]), Ok(5));
        assert_eq!(check_header(1, &[0, 0, 0, 1, 1, 5, 1, 0, 9]), Ok(8));
        assert!(check_header(1, &[0, 0, 0, 1]).is_err());
        assert!(check_header(0, &[0, 0]).is_err());
    }
}
