//! Strings from the input shown in text output and error messages: control characters, escape
//! sequences, line breaks and bidirectional overrides are escaped (a rack id or member id must not
//! move the cursor, colour the terminal or forge a line of the story), and long values are cut
//! with their length in bytes (an error message never dumps a whole buffer).
//!
//! The rules are the library's (`codec::json`, which quotes input documents in its errors the
//! same way): one copy, so the binary and the library cannot escape differently.

pub use kafka_consumer_protocol::internal::{quoted, terminal_safe as clean};
