//! Placeholder: the codec lands in the next commit.
