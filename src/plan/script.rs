//! The entrypoint wrapper script.
