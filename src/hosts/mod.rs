//! The hosts meshjob runs under, and the one path they all take:
//! source -> pipeline (`run`) -> output.
//!
//! The command line edits files and stdin ([`crate::commands::files`]). The other hosts pipe a resource
//! stream through the binary: the KRM function ([`krm`]) and the kustomize legacy exec
//! plugin ([`kustomize`]). Each of those is a [`Host`]: it only translates, from its input
//! to settings and from the pipeline's outcome to its output. [`run()`] does the rest: a host
//! whose input is a plain resource stream (the kustomize plugin) has it processed as it
//! comes, documents written in order ([`stream_stdin`]); the KRM function, whose
//! ResourceList is one document, has stdin read whole (with the per-document cap), the
//! pipeline run and the reply handed to `output`. A new stream host is one more small file.

pub(crate) mod krm;
pub(crate) mod kustomize;

use crate::config::{FailOn, Settings};
use crate::exit;
use crate::finding::Rule;
use crate::output::console::{self, Reply};
use crate::output::hold::HoldBack;
use crate::output::report;
use crate::run::{self, Outcome};
use crate::source::{self, LoadError, Origin};
use crate::stream::stdin::Stdin;
use crate::stream::{self, Done, Sink, Stop};
use crate::verdict::Verdict;
use std::io::IsTerminal;

/// A program that pipes a resource stream through meshjob.
pub(crate) trait Host {
    /// What the host learned from its input before the run, for [`Host::reply`].
    type Input;

    /// Names the host in error messages (`<label>: error: ...`).
    fn label(&self) -> &'static str;

    /// Checks the input and finds the settings: from the input itself (a KRM
    /// `functionConfig`) or from elsewhere (the plugin's config file).
    fn prepare(&self, text: &str) -> Result<(Settings, Self::Input), String>;

    /// Translates the pipeline's outcome into the host's output.
    fn reply(&self, text: &str, input: Self::Input, outcome: Outcome) -> Result<Reply, String>;

    /// For a host whose input is a plain resource stream, its settings: the stream is then
    /// processed as it comes ([`stream_stdin`]), not read whole. `None` for a host that needs
    /// its input whole (a KRM ResourceList is one document).
    fn streaming(&self) -> Option<Result<Settings, String>> {
        None
    }
}

/// Runs `host` on stdin and writes its reply; the exit status.
pub(crate) fn run(host: &impl Host) -> u8 {
    let label = host.label();
    if let Some(settings) = host.streaming() {
        return match settings {
            Ok(s) => stream_stdin(label, &s),
            Err(m) => console::reply(label, &Reply::trouble(label, &m)),
        };
    }
    let reply = match source::load(&Origin::Stdin) {
        Ok(text) => run_text(host, &text),
        Err(LoadError::Read(m) | LoadError::Decode { message: m, .. }) => {
            Reply::trouble(label, &format!("stdin: {m}"))
        }
    };
    console::reply(label, &reply)
}

/// Runs `host` on a text it was given.
pub(crate) fn run_text(host: &impl Host, text: &str) -> Reply {
    let go = || {
        let (settings, input) = host.prepare(text)?;
        let mut outcome = run::edit_text(text, &settings);
        if let Some(f) = &outcome.fatal {
            return Err(format!("{}: {}", at(text, f.offset), f.message));
        }
        outcome
            .findings
            .splice(0..0, crate::pipeline::conflicts(text, &settings));
        // A stream host returns the fixed stream: what "would change" has changed.
        outcome.findings.retain(|f| f.rule != Rule::WouldChange);
        // `failOn: warning`: kubectl shows a plugin's stderr only when it fails. (An error
        // left fails the host's own reply.)
        let mut verdict = Verdict::default();
        for f in &outcome.findings {
            verdict.take(f, settings.fail_on);
        }
        let mut reply = host.reply(text, input, outcome)?;
        if verdict.fails_left && reply.code == exit::OK {
            reply.code = exit::FINDINGS;
        }
        Ok(reply)
    };
    go().unwrap_or_else(|m| Reply::trouble(host.label(), &m))
}

/// A resource stream from stdin to stdout, as it comes: the documents in order, findings on
/// stderr in the plain format (`meshjob: <severity>: <message> [code]`), exit 1 when errors
/// are left. Its pods are decided with the stream's `Namespace` documents wherever they
/// stand (`stream::stdin`). A failure stops the output (see `output::hold`) and exits 2 with
/// `<label>: error: stdin:line:col: <message>`; so does stdout that does not take the
/// output, at once, without reading the rest of stdin.
pub(crate) fn stream_stdin(label: &str, settings: &Settings) -> u8 {
    let input = match Stdin::open() {
        Ok(s) => s,
        Err(e) => {
            return console::reply(
                label,
                &Reply::trouble(label, &format!("stdin: cannot read stdin: {e}")),
            );
        }
    };
    let ctx = input.context().clone();
    let ns = input.namespaces(&ctx);
    let mut stdout = console::stdout_writer();
    let mut sink = Plain {
        out: HoldBack::new(&mut stdout),
        stderr: String::new(),
        fail_on: settings.fail_on,
        verdict: Verdict::default(),
    };
    let opts = run::EditOptions::default();
    let mut stopped = match stream::edit_stream(input.reader(), settings, opts, ns, &mut sink) {
        Ok(()) => sink
            .out
            .finish()
            .err()
            .map(|e| console::cannot_write_stdout(&e)),
        Err(Stop::Failed(f)) if f.decode => Some(format!("stdin: {}", f.finding.message)),
        Err(Stop::Failed(f)) => Some(format!("stdin:{}:{}: {}", f.line, f.col, f.finding.message)),
        Err(Stop::Read(e)) => Some(format!("stdin: cannot read stdin: {e}")),
        Err(Stop::Sink(e)) => Some(console::cannot_write_stdout(&e)),
    };
    if let Some(m) = stopped.take() {
        let _ = sink.out.fail();
        console::stderr(&sink.stderr);
        return console::reply(label, &Reply::trouble(label, &m));
    }
    // `failOn: warning`: kubectl shows a plugin's stderr only when it fails.
    let code = if sink.verdict.fails_left {
        exit::FINDINGS
    } else {
        exit::OK
    };
    console::reply(
        label,
        &Reply {
            stdout: None,
            stderr: sink.stderr,
            code,
        },
    )
}

/// A stream host's sink: the documents to stdout, the findings gathered for stderr.
struct Plain<'a> {
    out: HoldBack<'a>,
    stderr: String,
    fail_on: FailOn,
    /// What the findings said: an error left, or a warning under `failOn: warning`, fails.
    verdict: Verdict,
}

impl Sink for Plain<'_> {
    fn batch(&mut self, done: &Done) -> std::io::Result<()> {
        for f in &done.result.findings {
            // A stream host returns the fixed stream: what "would change" has changed.
            if f.rule == Rule::WouldChange || !self.verdict.take(f, self.fail_on) {
                continue;
            }
            self.stderr.push_str(&report::plain(f));
            self.stderr.push('\n');
        }
        done.write_into(&mut self.out)
    }
}

/// `stdin:line:col` of an offset in a text read from stdin.
pub(crate) fn at(text: &str, offset: usize) -> String {
    let (line, col) = crate::yaml::text::line_col(text, offset);
    format!("stdin:{line}:{col}")
}

/// How a host program runs the binary without a subcommand: kustomize runs the legacy
/// plugin by its kind (`argv[0]` `MeshJobConfig`, config path in `argv[1]`); an orchestrator
/// runs a KRM exec function with no arguments and a ResourceList on stdin. `None` when
/// neither is the case: the command line is parsed as usual.
pub(crate) fn dispatch() -> Option<u8> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .first()
        .is_some_and(|a| kustomize::invoked_as_plugin(a))
    {
        return Some(run(&kustomize::Plugin::from_args(&args)));
    }
    if args.len() == 1 && !std::io::stdin().is_terminal() {
        return Some(run(&krm::Function));
    }
    None
}

/// The effective settings of a `MeshJobConfig` document (the legacy plugin's config file or
/// the KRM functionConfig): defaults, overridden by the document. `origin` names it in errors.
pub(crate) fn config_settings(text: &str, origin: &str) -> Result<Settings, String> {
    // Shown after the caller's "error:", so without the error's own label.
    let show = |e: crate::config::ConfigError| match e.line {
        0 => format!("{}: {}", e.path, e.message),
        line => format!("{}:{line}:{}: {}", e.path, e.column, e.message),
    };
    let config = crate::config::parse(text, origin).map_err(show)?;
    let settings = (crate::config::Resolver::without_flags())
        .settings(Some(&config))
        .map_err(show)?;
    if let Some(paths) = &config.spec.versions_from {
        let at = match paths.line {
            0 => String::new(),
            line => format!(":{line}:{}", paths.column),
        };
        return Err(format!(
            "{origin}{at}: `versionsFrom` is read by `diff`, `check`, `fix` and `versions` only: \
             the KRM function and the kustomize plugin see only the resources they are given; \
             give the versions as `istioVersion`, `linkerdVersion` and `kubernetesVersion` \
             instead (or put the documents that hold them among those resources)"
        ));
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_overrides_defaults_and_rejects_unknown_keys() {
        let s = config_settings(
            "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n  drainDuration: 9s\n",
            "x",
        )
        .expect("valid");
        assert_eq!(s.drain_duration.as_str(), "9s");
        assert_eq!(s.quit_url, Settings::default().quit_url);
        let e = config_settings(
            "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n  drainDuraton: 9s\n",
            "x",
        )
        .expect_err("unknown key");
        assert!(e.contains("drainDuraton"), "{e}");
        let e = config_settings("apiVersion: v1\nkind: ConfigMap\n", "x").expect_err("kind");
        assert!(e.contains("meshjob.dev/v1alpha1"), "{e}");
    }
}
