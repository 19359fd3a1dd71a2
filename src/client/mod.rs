//! The network side (feature `client`).

pub mod member;
