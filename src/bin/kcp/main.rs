//! `kcp`: command-line tool for the Kafka consumer protocol.

fn main() {}
