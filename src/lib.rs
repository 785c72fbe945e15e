//! meshjob: make Kubernetes Jobs and CronJobs finish when Istio or Linkerd injects a sidecar.
//!
//! The crate is laid out in the order the data flows (see DESIGN.md):
//! `source` -> `yaml` -> `locate` -> `decide` -> `plan` -> `apply` -> `output`.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod apply;
pub mod cli;
pub mod config;
pub mod decide;
pub mod exclude;
pub mod exit;
pub mod finding;
pub mod hosts;
pub mod kinds;
pub mod locate;
pub mod mesh;
pub mod output;
pub mod paths;
pub mod plan;
pub mod pod;
pub mod run;
pub mod source;
pub mod stream;
pub mod version;
pub mod yaml;
