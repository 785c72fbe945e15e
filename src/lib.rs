//! meshjob: make Kubernetes batch workloads finish when Istio or Linkerd injects a sidecar.
//!
//! The crate is laid out in the order the data flows (ARCHITECTURE.md, at the repository's
//! root, maps it): `commands` (or `hosts`) -> `source` -> `stream` -> `pipeline`:
//! `yaml` -> `locate` (`kinds`, `pod`) -> `decide` (`mesh`, `manifest_versions`) -> `plan` ->
//! `yaml::apply` -> `output`.
//!
//! Every module is private; what the binary, the tests, the benchmarks and the fuzz targets
//! use is re-exported here, so the compiler reports what nothing uses.

#![warn(clippy::print_stdout, clippy::print_stderr, unreachable_pub)]
// `unsafe` is allowed in two places only: the vector code of the quick scanner
// (`yaml::quick::masks`), which a test holds to its portable form, and the reading of an
// inline scalar text as a `str` (`yaml::value::Text::as_str`): its bytes are a whole `str`'s.
#![deny(unsafe_code)]

mod cli;
mod commands;
mod config;
mod decide;
mod exclude;
mod exit;
mod finding;
mod hosts;
mod image;
mod kinds;
mod locate;
mod manifest_versions;
mod memo;
mod mesh;
mod output;
mod paths;
mod pipeline;
mod plan;
mod pod;
mod rules;
mod run;
mod source;
mod stream;
mod verdict;
mod version;
mod yaml;

pub use cli::{Cli, Command};
pub use commands::config::{SettingsError, settings_here};
pub use commands::main;
pub use config::{
    MeshId, Release, Settings, StrategyChoice, Version, load as load_config, parse as parse_config,
    render_effective, schema_json,
};
pub use decide::RunContext;
pub use finding::{Finding, ObjectRef, Rule, Severity};
pub use kinds::Kinds;
pub use locate::locate;
pub use output::diff::unified as unified_diff;
pub use output::hold::HOLD_BYTES;
pub use output::hunks::Hunks;
pub use output::write::write_atomic;
pub use paths::Spelling;
pub use plan::script;
pub use plan::{plan_doc, plan_doc_in};
pub use rules::{TABLE as RULES, docs_index as rules_index};
pub use run::{
    Context, EditOptions, Outcome, Pieces, edit_pieces, edit_text, edit_text_with, edit_whole,
    once_per_text,
};
pub use source::{MAX_DOCUMENT_BYTES, Origin, Wide, decode, expand, wide_encoding};
pub use stream::Reader;
pub use version::{Given, ManifestPlace, VersionOrigin};
pub use yaml::apply::{Intended, apply, verify};
pub use yaml::edit::Edit;
pub use yaml::path::Seg;
pub use yaml::quick::Head as QuickHead;
pub use yaml::quick::Scanner as QuickScanner;
pub use yaml::quick::head as quick_head;
pub use yaml::split::pieces as split_pieces;
pub use yaml::subset::{difference as tree_difference, parse as parse_subset};
pub use yaml::text::line_col;
pub use yaml::tree::{Doc, Node, parse_full, parse_stream};
pub use yaml::value::{ScalarType, Text, Value, plain_type};
