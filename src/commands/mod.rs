//! The commands of the command line, one module each: `diff`, `check` and `fix`
//! ([`files`]), [`versions`], [`audit`], and the small ones that print what meshjob knows
//! ([`config`]: `config`, `schema`, `completions`, `manpage`). `krm` and `kustomize` run
//! meshjob under another program: they live in `hosts`.
//!
//! Each command checks its flags once ([`Resolver::new`]) before it reads a file, and
//! returns its exit status.

pub(crate) mod audit;
pub(crate) mod config;
pub(crate) mod files;
pub(crate) mod versions;
mod versions_from;

use crate::cli::{Cli, Command, KustomizeCommand, VersionsFormat};
use crate::config::Resolver;
use crate::exit;
use crate::hosts::{self, krm, kustomize};
use crate::output::console;
use crate::output::report::Format;
use clap::Parser;
use std::process::ExitCode;

/// Entry point of the binary.
pub fn main() -> ExitCode {
    if let Some(code) = hosts::dispatch() {
        return ExitCode::from(code);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if e.use_stderr() {
                let _ = e.print();
                return ExitCode::from(exit::TROUBLE);
            }
            // `--help` and `--version` go to stdout, which must take them.
            let help = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            return ExitCode::from(match console::stdout(help.as_bytes()) {
                Ok(()) => exit::OK,
                Err(w) => console::trouble(&console::cannot_write_stdout(&w)),
            });
        }
    };
    ExitCode::from(run(cli.command))
}

/// Runs `command`; its exit status.
pub(crate) fn run(command: Command) -> u8 {
    let (mode, args, less) = match command {
        Command::Diff(a) => (files::Mode::Diff, a, files::Less::default()),
        Command::Check(a) => {
            let less = files::Less {
                no_diff: a.no_diff,
                statistics: a.statistics,
            };
            (files::Mode::Check, a.run, less)
        }
        Command::Fix(a) => (files::Mode::Fix, a, files::Less::default()),
        Command::Config(a) => return config::effective(&a.settings),
        Command::Krm => return hosts::run(&krm::Function),
        Command::Versions(a) => {
            let settings = match checked(&a.settings) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let req = versions::Request {
                paths: a.paths,
                settings,
                format: match a.format {
                    VersionsFormat::Text => Format::Human,
                    VersionsFormat::Json => Format::Json,
                },
            };
            return versions::run(&req);
        }
        Command::Kustomize(KustomizeCommand::Install { dir, force }) => {
            return match kustomize::install(dir.as_deref(), force) {
                Ok((p, kustomize::Installed::New)) => print(&format!(
                    "installed the kustomize plugin at {}\n",
                    p.display()
                )),
                Ok((p, kustomize::Installed::Already)) => print(&format!(
                    "already installed: {} links to this binary\n",
                    p.display()
                )),
                Err(m) => console::trouble(&m),
            };
        }
        Command::Audit(a) => {
            let settings = match checked(&a.settings) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let req = audit::Request {
                dumps: a.dumps,
                settings,
                now: a.now,
                json: a.format == VersionsFormat::Json,
                repo: a.repo,
            };
            return audit::run(&req);
        }
        Command::Schema => return print(&crate::config::schema_json()),
        Command::Completions { shell } => return config::completions(shell),
        Command::Manpage => return config::manpage(),
    };
    let settings = match checked(&args.settings) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let req = files::Request {
        mode,
        paths: args.paths,
        settings,
        exclude: args.exclude,
        stdin_filename: args.stdin_filename,
        force_mesh: args.mesh_config,
        color: args.color,
        format: args.format,
        quiet: args.quiet,
        less,
    };
    files::run(&req)
}

/// The settings resolver of a command that reads files: its flags checked once, before any
/// file is read; the exit status when one is invalid (said on stderr).
fn checked(flags: &crate::config::Flags) -> Result<Resolver, u8> {
    Resolver::new(flags).map_err(|m| console::trouble(&m))
}

/// Prints a command's whole output; its exit status.
pub(crate) fn print(text: &str) -> u8 {
    match console::stdout(text.as_bytes()) {
        Ok(()) => exit::OK,
        Err(e) => console::trouble(&console::cannot_write_stdout(&e)),
    }
}
