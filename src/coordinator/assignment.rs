//! The leader's assignment as a job to run off the caller's task
//! ([`Config::offload_assignment`](super::Config::offload_assignment)):
//! an assignor may take seconds on a large group, and the task that computes it must not be the
//! one that sends heartbeats.

use std::fmt;

use bytes::Bytes;

use super::JoinGroupMember;
use crate::assignor::leader::{self, LeaderError, LeaderRound};
use crate::assignor::{
    AssignError, ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor, RebalanceProtocol,
};
use crate::Assignment;

/// The leader's round for one generation, with the selected assignor taken out of the
/// coordinator. [`run`](Self::run) it anywhere (it is `Send`), then give the
/// [`AssignmentDone`] to [`Coordinator::handle_assignment`](super::Coordinator::handle_assignment).
pub struct AssignmentJob {
    pub(super) generation: i32,
    pub(super) index: usize,
    pub(super) assignor: Box<dyn PartitionAssignor>,
    pub(super) protocol: RebalanceProtocol,
    pub(super) metadata: ClusterMetadata,
    pub(super) members: Vec<JoinGroupMember>,
}

impl fmt::Debug for AssignmentJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssignmentJob")
            .field("generation", &self.generation)
            .field("assignor", &self.assignor.name())
            .field("members", &self.members.len())
            .finish_non_exhaustive()
    }
}

impl AssignmentJob {
    /// The generation the assignment is for.
    pub fn generation(&self) -> i32 {
        self.generation
    }

    /// Computes the assignment ([`leader::lead`]); blocking, as long as the assignor takes.
    pub fn run(self) -> AssignmentDone {
        let result = leader::lead(self.assignor.as_ref(), self.protocol, &self.metadata, &self.members);
        AssignmentDone { generation: self.generation, index: self.index, assignor: self.assignor, result }
    }
}

/// A computed [`AssignmentJob`]: the assignor on its way back, and the round or why it failed.
pub struct AssignmentDone {
    pub(super) generation: i32,
    pub(super) index: usize,
    pub(super) assignor: Box<dyn PartitionAssignor>,
    pub(super) result: Result<LeaderRound, LeaderError>,
}

impl fmt::Debug for AssignmentDone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssignmentDone")
            .field("generation", &self.generation)
            .field("assignor", &self.assignor.name())
            .field("ok", &self.result.is_ok())
            .finish_non_exhaustive()
    }
}

/// Holds an assignor's place (name and protocols) while the assignor itself is out in a job.
/// The coordinator sends no JoinGroup meanwhile, so it never asks it for a subscription; were it
/// asked to assign, it refuses.
pub(super) struct Away {
    name: String,
    protocols: Vec<RebalanceProtocol>,
}

impl Away {
    pub(super) fn of(assignor: &dyn PartitionAssignor) -> Away {
        Away { name: assignor.name().to_string(), protocols: assignor.supported_protocols().to_vec() }
    }
}

impl PartitionAssignor for Away {
    fn name(&self) -> &str {
        &self.name
    }
    fn supported_protocols(&self) -> &[RebalanceProtocol] {
        &self.protocols
    }
    fn subscription_user_data(&self, _topics: &[String]) -> Option<Bytes> {
        None
    }
    fn assign(&self, _metadata: &ClusterMetadata, _members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        Err(AssignError::AssignorBusy(self.name.clone()))
    }
    fn on_assignment(&mut self, _assignment: &Assignment, _generation_id: i32) {}
}
