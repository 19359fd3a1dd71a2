//! Findings about a whole group.

use core::fmt;

use crate::TopicPartitions;

/// What a [`Diagnostic`] is about. The [`code`](DiagnosticKind::code) strings are a stable
/// interface (the `kind` of `kcp group describe`'s diagnostics); new kinds may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A partition is in the assignment of more than one member (or twice in one).
    DoubleAssignment,
    /// A partition one member still claims (owned partitions, or its current assignment in a
    /// KIP-848 group) is assigned to another member: a hand-over in progress, or one that is stuck.
    PendingRevocation,
    /// A partition of a subscribed topic that nobody is assigned, in a stable group.
    UnassignedPartition,
    /// A member claims a partition id the topic does not have (a partition that no longer
    /// exists): Java's sticky assignors can then hand a partition out twice (KAFKA-21674).
    ClaimBeyondPartitionCount,
    /// A member is assigned a partition id the topic does not have.
    AssignmentBeyondPartitionCount,
    /// A member subscribes to a topic the metadata does not know (deleted, not yet created, or
    /// not authorized): nobody is assigned its partitions.
    UnknownTopic,
    /// A member claims partitions from an older generation than other members (classic), or
    /// its member epoch is behind the group's assignment epoch (KIP-848).
    StaleGeneration,
    /// A payload that not even the lenient reader decodes.
    UndecodablePayload,
    /// A payload that only the lenient reader accepts, or userData in a known third-party
    /// format Java cannot read: the defect of a named client.
    ThirdPartyDefect,
    /// userData that is not the built-in assignor's format (a custom assignor's state).
    CustomUserData,
    /// Partitions with lag that no member owns or is about to own: nothing works the lag off
    /// (the group is empty, or the topic is no longer subscribed).
    LagWithoutOwner,
    /// A committed offset beyond the log end or before the log start: a consumer that resumes
    /// there resets by `auto.offset.reset`.
    OffsetOutOfRange,
}

impl DiagnosticKind {
    /// The stable snake_case name.
    pub fn code(self) -> &'static str {
        match self {
            DiagnosticKind::DoubleAssignment => "double_assignment",
            DiagnosticKind::PendingRevocation => "pending_revocation",
            DiagnosticKind::UnassignedPartition => "unassigned_partition",
            DiagnosticKind::ClaimBeyondPartitionCount => "claim_beyond_partition_count",
            DiagnosticKind::AssignmentBeyondPartitionCount => "assignment_beyond_partition_count",
            DiagnosticKind::UnknownTopic => "unknown_topic",
            DiagnosticKind::StaleGeneration => "stale_generation",
            DiagnosticKind::UndecodablePayload => "undecodable_payload",
            DiagnosticKind::ThirdPartyDefect => "third_party_defect",
            DiagnosticKind::CustomUserData => "custom_user_data",
            DiagnosticKind::LagWithoutOwner => "lag_without_owner",
            DiagnosticKind::OffsetOutOfRange => "offset_out_of_range",
        }
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Which embedded payload of a member a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PayloadKind {
    /// The JoinGroup protocol metadata (a Subscription).
    Subscription,
    /// The SyncGroup assignment.
    Assignment,
    /// The subscription's userData.
    UserData,
}

impl PayloadKind {
    /// `subscription`, `assignment` or `user_data`.
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadKind::Subscription => "subscription",
            PayloadKind::Assignment => "assignment",
            PayloadKind::UserData => "user_data",
        }
    }
}

/// One finding about a group.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Diagnostic {
    /// What it is.
    pub kind: DiagnosticKind,
    /// The topic, when the finding is about one topic.
    pub topic: Option<String>,
    /// The partition, when the finding is about exactly one partition.
    pub partition: Option<i32>,
    /// Every partition concerned, grouped per topic (empty for a finding about a payload).
    pub partitions: Vec<TopicPartitions>,
    /// The members concerned, by member id (for a hand-over: the claimant first).
    pub members: Vec<String>,
    /// The payload concerned, for the payload findings.
    pub payload: Option<PayloadKind>,
    /// For `third_party_defect`: the repair the lenient reader made (or the defect's name).
    pub repair: Option<String>,
    /// Whether this prevents a KIP-848 online upgrade of the group (the broker refuses to
    /// convert a classic group whose embedded payloads it cannot read, or whose last
    /// assignment has a partition twice, KAFKA-21684) or loses state in it (userData).
    pub blocks_online_upgrade: bool,
    /// One sentence for a person.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn new(kind: DiagnosticKind, message: String) -> Self {
        Diagnostic {
            kind,
            topic: None,
            partition: None,
            partitions: Vec::new(),
            members: Vec::new(),
            payload: None,
            repair: None,
            blocks_online_upgrade: false,
            message,
        }
    }

    pub(crate) fn partition(mut self, topic: &str, partition: i32) -> Self {
        self.topic = Some(topic.to_owned());
        self.partition = Some(partition);
        self.partitions = vec![TopicPartitions::new(topic, [partition])];
        self
    }

    pub(crate) fn topic_partitions(mut self, topic: &str, partitions: Vec<i32>) -> Self {
        self.topic = Some(topic.to_owned());
        if let [only] = partitions[..] {
            self.partition = Some(only);
        }
        self.partitions = vec![TopicPartitions::new(topic, partitions)];
        self
    }

    pub(crate) fn members<S: AsRef<str>>(mut self, members: impl IntoIterator<Item = S>) -> Self {
        self.members = members.into_iter().map(|m| m.as_ref().to_owned()).collect();
        self
    }

    pub(crate) fn blocking(mut self) -> Self {
        self.blocks_online_upgrade = true;
        self
    }

    /// A key identifying the finding across snapshots (the message may change wording).
    pub fn identity(&self) -> (DiagnosticKind, Option<&str>, Option<i32>, &[String], Option<PayloadKind>) {
        (self.kind, self.topic.as_deref(), self.partition, &self.members, self.payload)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// The sentence appended to findings that block a KIP-848 online upgrade.
pub(crate) const BLOCKS_UPGRADE: &str = "blocks a KIP-848 online upgrade";
