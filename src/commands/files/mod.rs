//! The command line's host: files, directories and stdin in; a diff, rewritten files or
//! the rewritten stream out; findings and a summary line on stderr, or one JSON report on
//! stdout.
//!
//! [`run()`] expands the PATHs (`source::expand`) with the excludes of the flags and of each
//! directory's config file ([`configs`]); a [`run::Run`] takes the inputs in order; each
//! input is streamed through the pipeline by [`input`], its batches going to a
//! [`sink::FileSink`] (the diff, stdout, or the file's replacement), and what it finds to an
//! [`emit::Reporter`], which reports it as it comes: memory follows the largest batch, not
//! the input, in every format.

mod configs;
mod emit;
mod input;
mod project;
mod run;
mod sink;

use crate::config::Resolver;
use crate::exclude::Pattern;
use crate::output::console::{self, ColorChoice};
use crate::output::report::Format;
use crate::paths::Spelling;
use crate::source::{self, Origin};
use configs::Configs;
use run::Run;
use std::path::Path;

/// What the run does with each input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Print the diff; exit 0.
    Diff,
    /// Print the diff; exit 1 when anything would change or an error is found.
    Check,
    /// Rewrite files in place (stdin to stdout); exit 1 when errors are left.
    Fix,
}

/// One run of `diff`, `check` or `fix`.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub mode: Mode,
    /// Files or directories; `-` is stdin. Empty: the working directory (stdin with
    /// `stdin_filename`).
    pub paths: Vec<std::ffi::OsString>,
    /// The flags, checked: the top layer over each file's config.
    pub settings: Resolver,
    /// `--exclude` patterns, relative to the working directory.
    pub exclude: Vec<String>,
    /// The name of stdin (`--stdin-filename`).
    pub stdin_filename: Option<String>,
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    pub color: ColorChoice,
    pub format: Format,
    /// Show only warnings and errors: no info notes, no summary.
    pub quiet: bool,
    /// What `check` leaves out.
    pub less: Less,
}

/// What `check` can leave out of its report.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Less {
    /// No diff (`--no-diff`); the JSON report's `changed` entries lose their `diff`.
    pub no_diff: bool,
    /// A count per rule instead of each finding (`--statistics`).
    pub statistics: bool,
}

/// Runs `req`; the exit status.
pub(crate) fn run(req: &Request) -> u8 {
    let spelling = Spelling::current();
    let Some(cwd) = spelling.cwd().map(Path::to_path_buf) else {
        return console::trouble("cannot find the working directory");
    };
    let paths = match paths_of(req) {
        Ok(p) => p,
        Err(m) => return console::trouble(&m),
    };
    let flag_patterns = match (req.exclude.iter())
        .map(|p| Pattern::new(p, &cwd))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(p) => p,
        Err(m) => return console::trouble(&format!("--exclude: {m}")),
    };
    let flag_versions = match super::versions_from::read(
        &req.settings.flags().versions_from,
        None,
        &spelling,
        "--versions-from",
    ) {
        Ok(v) => v,
        Err(m) => return console::trouble(&m),
    };
    let mut configs = Configs::new(&req.settings, &spelling);
    // The excludes of the flags, then of the nearest config file.
    let excluded = |configs: &mut Configs<'_>, path: &Path, is_dir: bool| {
        if let Some(p) = flag_patterns.iter().find(|p| p.matches(path, is_dir)) {
            return Some(p.text.clone());
        }
        let layer = configs.layer(path.parent()?).ok()?;
        let p = layer.excludes.iter().find(|p| p.matches(path, is_dir))?;
        Some(p.text.clone())
    };
    let expansion = source::expand(
        &paths,
        &spelling,
        req.stdin_filename.as_deref(),
        &mut |path, is_dir| excluded(&mut configs, path, is_dir),
    );
    // The rest of each named file's project, read for its context only. Its own config
    // files are looked up apart, so that a broken one is reported only by a file it governs.
    let project = {
        let mut others = Configs::new(&req.settings, &spelling);
        let mut check = |path: &Path, is_dir: bool| excluded(&mut others, path, is_dir);
        project::parts(
            &expansion.inputs,
            &paths,
            &spelling,
            &mut configs,
            &mut check,
        )
    };
    let mut r = Run::new(req);
    r.stdin_only =
        expansion.inputs.iter().all(|i| i.origin == Origin::Stdin) && !expansion.inputs.is_empty();
    r.notes(&expansion);
    r.inputs(&expansion.inputs, &mut configs, &flag_versions, project);
    for e in configs.errors {
        r.stop(e);
    }
    r.finish()
}

/// The PATH arguments a run stands for, or why they make no sense.
fn paths_of(req: &Request) -> Result<Vec<std::ffi::OsString>, String> {
    let mut paths = req.paths.clone();
    if paths.is_empty() {
        // ruff's convention: no PATH is the working directory. Stdin is read only when
        // asked for, never because it is not a terminal (in CI it never is).
        paths.push(
            if req.stdin_filename.is_some() {
                "-"
            } else {
                "."
            }
            .into(),
        );
        // A pipe on stdin with no PATH is most likely a filter set up without `-` (a Helm
        // post-renderer): `fix` would rewrite the working directory instead.
        if req.stdin_filename.is_none() && stdin_is_pipe() {
            let what = match req.mode {
                Mode::Fix => "refusing to fix the working directory",
                Mode::Check | Mode::Diff => "checking the working directory",
            };
            let m = format!(
                "stdin is a pipe, but no PATH was given: {what}, not stdin; pass `-` to read \
                 stdin, or `.` for the working directory"
            );
            if req.mode == Mode::Fix {
                return Err(m);
            }
            console::stderr(&format!("meshjob: warning: {m}\n"));
        }
    }
    let stdin = paths.iter().any(|p| p == "-");
    if req.stdin_filename.is_some() && !stdin {
        return Err("--stdin-filename names stdin, but `-` is not among the PATHs".into());
    }
    let each = match req.format {
        Format::Github => Some("github"),
        Format::Sarif => Some("sarif"),
        Format::Human | Format::Json => None,
    };
    if let (true, Some(format)) = (req.less.statistics, each) {
        return Err(format!(
            "--statistics counts findings per rule; --format {format} reports each finding, \
             so the two do not go together"
        ));
    }
    if stdin && req.mode == Mode::Fix && on_stdout(req.format) {
        let name = if req.format == Format::Sarif {
            "sarif"
        } else {
            "json"
        };
        return Err(format!(
            "`fix -` writes the fixed stream to stdout, which --format {name} needs for its \
             report; use `check --format {name} -` for the report"
        ));
    }
    Ok(paths)
}

/// Whether the report goes to stdout, whole, at the end (so the diff cannot).
fn on_stdout(format: Format) -> bool {
    matches!(format, Format::Json | Format::Sarif)
}

/// Whether stdin is a pipe or a socket: what a program piping into meshjob gives it (a
/// terminal, `/dev/null` or a redirected file is not).
#[cfg(unix)]
fn stdin_is_pipe() -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(fd) = std::os::fd::AsFd::as_fd(&std::io::stdin()).try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
}

/// Whether stdin is a pipe: `GetFileType` says `FILE_TYPE_PIPE` (a console is
/// `FILE_TYPE_CHAR`, `NUL` too, and a redirected file `FILE_TYPE_DISK`).
#[cfg(windows)]
fn stdin_is_pipe() -> bool {
    winapi_util::file::typ(winapi_util::HandleRef::stdin()).is_ok_and(|t| t.is_pipe())
}
