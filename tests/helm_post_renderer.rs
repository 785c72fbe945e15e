//! meshjob as a Helm post-renderer, tested against the contract Helm's source sets, since no
//! `helm` binary runs here:
//!
//! - Helm 3 (`--post-renderer meshjob --post-renderer-args fix --post-renderer-args -`) runs
//!   the binary with exactly those arguments, writes the rendered manifests to a stdin pipe,
//!   and takes all of stdout as the new manifests; a non-zero exit fails the release and shows
//!   stderr (pkg/postrender/exec.go, helm v3.20.2). The stream is
//!   `---\n# Source: <file>\n<content>\n` per manifest, hooks left out
//!   (pkg/action/action.go, renderResources).
//! - Helm 4 (`--post-renderer meshjob`, the plugin in integrations/helm) runs the plugin's
//!   `platformCommand`: `command` split on spaces, `$VAR`s expanded, its `args`, then the
//!   `--post-renderer-args` values (internal/plugin/subprocess_commands.go, PrepareCommands,
//!   helm v4.2.4). The stream is every manifest, hooks included, each annotated with
//!   `postrenderer.helm.sh/postrender-filename`, which Helm reads back to rebuild its files
//!   (pkg/action/action.go, annotateAndMerge / splitAndDeannotate). Empty output is an error
//!   (pkg/postrenderer/postrenderer.go).
//!
//! The binary runs with piped stdin, stdout and stderr, no terminal, as Helm runs it.

mod common;

use common::{hosts, root};

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
const HELM4_FILENAME: &str = "postrenderer.helm.sh/postrender-filename";
const WRAPPER_MARK: &str = "# meshjob-wrapper v";

/// Builds the stream Helm 3 hands its post-renderer, one `# Source:` block per template file,
/// the way renderResources prints it.
fn helm3_stream(files: &[(&str, &str)]) -> String {
    files
        .iter()
        .map(|(name, content)| format!("---\n# Source: {name}\n{content}\n"))
        .collect()
}

const SERVICE_ACCOUNT: &str = "\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: db-operator
  labels:
    app.kubernetes.io/managed-by: Helm
";

const CONFIG_MAP: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: db-settings
data:
  # Kept as written, comments and odd quoting included.
  settings.yaml: |
    command: [\"not\", \"a\", \"job\"]
  mode: 'fast'
";

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db-operator
spec:
  replicas: 1
  selector:
    matchLabels: {app: db-operator}
  template:
    metadata:
      labels: {app: db-operator}
    spec:
      serviceAccountName: db-operator
      containers:
        - name: operator
          image: \"registry.example/db-operator:1.4.0\"
          command: [\"/manager\"]
";

const MIGRATION_JOB: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: db-migrate
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: \"registry.example/db-migrate:1.4.0\"
          command: [\"/migrate\", \"--to\", \"latest\"]
";

const BACKUP_CRONJOB: &str = "\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: db-backup
spec:
  schedule: \"0 3 * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              image: registry.example/db-backup:1.4.0
              command:
                - /backup
                - --bucket=s3://backups
";

/// What Helm 4 hands the plugin: kyaml-formatted documents joined by `---`, each with the
/// file-name annotation, the migration Job being a pre-upgrade hook.
const HELM4_STREAM: &str = "\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: db-operator
  annotations:
    postrenderer.helm.sh/postrender-filename: 'db/templates/serviceaccount.yaml'
---
apiVersion: batch/v1
kind: Job
metadata:
  name: db-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
    postrenderer.helm.sh/postrender-filename: 'db/templates/migrate-job.yaml'
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: \"registry.example/db-migrate:1.4.0\"
        command: [\"/migrate\", \"--to\", \"latest\"]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db-operator
  annotations:
    postrenderer.helm.sh/postrender-filename: 'db/templates/deployment.yaml'
spec:
  replicas: 1
  selector:
    matchLabels:
      app: db-operator
  template:
    metadata:
      labels:
        app: db-operator
    spec:
      containers:
      - name: operator
        image: \"registry.example/db-operator:1.4.0\"
        command: [\"/manager\"]
";

fn helm3_chart() -> String {
    helm3_stream(&[
        ("db/templates/serviceaccount.yaml", SERVICE_ACCOUNT),
        ("db/templates/configmap.yaml", CONFIG_MAP),
        ("db/templates/deployment.yaml", DEPLOYMENT),
        ("db/templates/migrate-job.yaml", MIGRATION_JOB),
        ("db/templates/backup-cronjob.yaml", BACKUP_CRONJOB),
    ])
}

/// Runs the binary as Helm 3 does: `--post-renderer meshjob` plus each `--post-renderer-args`.
fn helm3(post_renderer_args: &[&str], stdin: &str) -> Output {
    hosts::run_bounded(
        Command::new(common::bin()).args(post_renderer_args),
        stdin.as_bytes(),
        LIMIT,
    )
}

/// The command line Helm 4's PrepareCommands builds from the plugin's `platformCommand` for
/// linux/amd64, with `extra` (the `--post-renderer-args` values) appended.
fn helm4_argv(
    plugin: &Value,
    env: &BTreeMap<&str, String>,
    extra: &[&str],
    os: &str,
) -> Vec<String> {
    let cmds = plugin["runtimeConfig"]["platformCommand"]
        .as_array()
        .expect("runtimeConfig.platformCommand is a list");
    // Exact os+arch match first, then os only, then neither (getPlatformCommand).
    let field = |c: &Value, k: &str| c[k].as_str().unwrap_or("").to_ascii_lowercase();
    let chosen = cmds
        .iter()
        .find(|c| field(c, "os") == os && field(c, "arch") == "amd64")
        .or_else(|| {
            cmds.iter()
                .find(|c| field(c, "os") == os && field(c, "arch").is_empty())
        })
        .or_else(|| {
            cmds.iter()
                .find(|c| field(c, "os").is_empty() && field(c, "arch").is_empty())
        })
        .unwrap_or_else(|| panic!("a platformCommand applies to {os}/amd64"));
    let expand = |s: &str| expand_env(s, env);
    let command = chosen["command"].as_str().expect("command");
    let mut argv: Vec<String> = command.split(' ').map(expand).collect();
    for a in chosen["args"].as_array().into_iter().flatten() {
        argv.push(expand(a.as_str().expect("args are strings")));
    }
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv
}

/// Go's os.Expand: `$NAME` and `${NAME}`, unknown names to "".
fn expand_env(s: &str, env: &BTreeMap<&str, String>) -> String {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let rest = &s[i + 1..];
        let (name, used) = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').expect("closed ${");
            (&inner[..end], end + 2)
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], end)
        };
        out.push_str(env.get(name).map_or("", String::as_str));
        for _ in 0..used {
            chars.next();
        }
    }
    out
}

fn plugin() -> Value {
    let text = std::fs::read_to_string(root().join("integrations/helm/plugin.yaml"))
        .expect("integrations/helm/plugin.yaml");
    serde_saphyr::from_str(&text).expect("plugin.yaml parses")
}

/// Runs the plugin as Helm 4 does on Linux, with meshjob found on PATH (exec.Command looks a
/// bare name up there). Helm's place, the plugin's parent, is taken by a shell whose stderr
/// is the one captured: the plugin writes meshjob's stderr to its parent's.
fn helm4(extra: &[&str], stdin: &str) -> Output {
    let plugin_dir = root().join("integrations/helm");
    let bin_dir = common::bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut env = BTreeMap::new();
    env.insert("HELM_PLUGIN_NAME", "meshjob".to_string());
    env.insert("HELM_PLUGIN_DIR", plugin_dir.display().to_string());
    let argv = helm4_argv(&plugin(), &env, extra, "linux");
    let mut cmd = Command::new("sh");
    // Not `exec`, and not the shell's last command either (which some shells exec): the
    // shell stays the plugin's parent.
    cmd.args(["-c", "\"$@\"; exit $?", "helm"])
        .args(&argv)
        .env("PATH", path);
    for (k, v) in &env {
        cmd.env(k, v);
    }
    hosts::run_bounded(&mut cmd, stdin.as_bytes(), LIMIT)
}

/// Splits a stream at its `---` lines; the text before the first one is document 0.
fn documents(stream: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in stream.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(&stream[start..pos]);
            start = pos + line.len();
        }
        pos += line.len();
    }
    docs.push(&stream[start..]);
    docs
}

fn kind_of(doc: &str) -> Option<&str> {
    doc.lines().find_map(|l| l.strip_prefix("kind: "))
}

/// The parsed, non-empty documents of a stream; panics when it is not YAML.
fn parse_stream(stream: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(stream)
        .unwrap_or_else(|e| panic!("stdout is not a YAML stream: {e}\n{stream}"))
        .into_iter()
        .filter(|v| !v.is_null())
        .collect()
}

/// The success contract: exit 0, only YAML on stdout with the same documents in the same
/// order, Jobs and CronJobs fixed, every other document byte-identical, and a second pass a
/// no-op.
fn assert_post_rendered(input: &str, out: &Output, fixed_kinds: usize) {
    assert_eq!(out.status.code(), Some(0), "{}", hosts::show(out));
    let stdout = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
    let before = documents(input);
    let after = documents(&stdout);
    assert_eq!(before.len(), after.len(), "document count\n{stdout}");
    let mut fixed = 0;
    for (b, a) in before.iter().zip(&after) {
        match kind_of(b) {
            Some("Job" | "CronJob") => {
                assert!(a.contains(WRAPPER_MARK), "not wrapped:\n{a}");
                assert!(a.contains("proxy.istio.io/config"), "no proxy config:\n{a}");
                // The lines Helm and the hook machinery read are kept.
                for line in b.lines().filter(|l| l.contains("helm.sh/")) {
                    assert!(a.contains(line), "lost {line:?}:\n{a}");
                }
                fixed += 1;
            }
            _ => assert_eq!(b, a, "a document that is not a Job changed"),
        }
    }
    assert_eq!(fixed, fixed_kinds);
    assert_eq!(
        parse_stream(input).len(),
        parse_stream(&stdout).len(),
        "parsed document count"
    );
    let again = helm3(&["fix", "-"], &stdout);
    assert_eq!(again.status.code(), Some(0), "{}", hosts::show(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        stdout,
        "a second pass changed the output"
    );
}

#[test]
fn helm3_post_renderer_fixes_jobs_and_cronjobs_and_keeps_every_other_byte() {
    let input = helm3_chart();
    let out = helm3(&["fix", "-"], &input);
    assert_post_rendered(&input, &out, 2);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("---\n# Source: db/templates/serviceaccount.yaml\n"));
    assert!(stdout.contains("# Source: db/templates/migrate-job.yaml\n"));
}

#[test]
fn helm3_post_renderer_args_reach_meshjob_after_the_dash() {
    let input = helm3_chart();
    let out = helm3(&["fix", "-", "--drain-duration=12s"], &input);
    assert_post_rendered(&input, &out, 2);
    assert!(String::from_utf8_lossy(&out.stdout).contains("terminationDrainDuration: 12s"));
}

#[test]
fn helm4_plugin_is_a_valid_postrenderer_v1_plugin() {
    // The checks of MetadataV1.Validate and Metadata.Validate (internal/plugin, v4.2.4).
    let p = plugin();
    assert_eq!(p["apiVersion"], "v1");
    assert_eq!(p["type"], "postrenderer/v1");
    assert_eq!(p["runtime"], "subprocess");
    let name = p["name"].as_str().expect("name");
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "plugin name {name:?}"
    );
    // `--post-renderer meshjob` names the plugin.
    assert_eq!(name, "meshjob");
    assert_eq!(
        p["version"].as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "the plugin's version follows the crate's"
    );
    // `-` explicitly: stdin is the stream whatever meshjob does when given no path.
    let env = BTreeMap::new();
    let argv = helm4_argv(&p, &env, &[], "darwin");
    assert_eq!(argv, ["meshjob", "fix", "-"]);
    // On Linux, a script of the plugin's runs the same command (see its test below).
    let env = BTreeMap::from([("HELM_PLUGIN_DIR", "/plugins/meshjob".to_string())]);
    let argv = helm4_argv(&p, &env, &[], "linux");
    assert_eq!(argv, ["sh", "/plugins/meshjob/post-render.sh"]);
    let keys: Vec<&String> = p.as_object().expect("a mapping").keys().collect();
    for k in &keys {
        assert!(
            [
                "apiVersion",
                "name",
                "type",
                "runtime",
                "version",
                "sourceURL",
                "config",
                "runtimeConfig"
            ]
            .contains(&k.as_str()),
            "Helm 4 does not know the key {k}"
        );
    }
}

#[test]
fn helm4_plugin_fixes_hook_jobs_and_keeps_the_filename_annotation() {
    let out = helm4(&[], HELM4_STREAM);
    assert_post_rendered(HELM4_STREAM, &out, 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let names = |s: &str| -> Vec<String> {
        parse_stream(s)
            .iter()
            .map(|d| {
                d["metadata"]["annotations"][HELM4_FILENAME]
                    .as_str()
                    .expect("every document keeps the file-name annotation")
                    .to_string()
            })
            .collect()
    };
    assert_eq!(names(HELM4_STREAM), names(&stdout));
}

/// Helm 4 post-renders in file-name order, before it sorts by kind (pkg/action/action.go,
/// annotateAndMerge, v4.2.4): `templates/job.yaml` comes before `templates/namespace.yaml`.
/// The Namespace still places the Job in its mesh.
#[test]
fn helm4_plugin_decides_a_job_with_a_namespace_that_comes_after_it() {
    let stream = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: db-migrate
  namespace: db
  annotations:
    postrenderer.helm.sh/postrender-filename: 'db/templates/job.yaml'
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: \"registry.example/db-migrate:1.4.0\"
        command: [\"/migrate\"]
---
apiVersion: v1
kind: Namespace
metadata:
  name: db
  annotations:
    linkerd.io/inject: enabled
    postrenderer.helm.sh/postrender-filename: 'db/templates/namespace.yaml'
";
    let out = helm4(&[], stream);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", hosts::show(&out));
    assert!(
        stdout.contains("for q in localhost:4191/shutdown;"),
        "Linkerd's wrapper:\n{stdout}"
    );
    assert!(!stdout.contains("quitquitquit"), "not Istio's:\n{stdout}");
}

#[test]
fn helm4_plugin_passes_post_renderer_args_on() {
    let out = helm4(&["--drain-duration=7s"], HELM4_STREAM);
    assert_post_rendered(HELM4_STREAM, &out, 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("terminationDrainDuration: 7s"));
}

/// On invalid input Helm must fail, and show why. Helm reads stdout only after a zero exit
/// (both versions), so what matters is the status, the message, and that stdout is never a
/// half-edited stream: it is empty or the input untouched.
fn assert_refused(input: &[u8], out: &Output, line_col: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", hosts::show(out));
    assert!(
        out.stdout.is_empty() || out.stdout == input,
        "stdout holds something other than nothing or the untouched input\n{}",
        hosts::show(out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("-:{line_col}: error: ")),
        "the message does not point at {line_col}\n{stderr}"
    );
}

#[test]
fn an_invalid_stream_exits_2_with_the_place_on_stderr_and_no_fixed_output() {
    // A fixable Job first, then a template that rendered broken YAML.
    let input = helm3_stream(&[
        ("db/templates/migrate-job.yaml", MIGRATION_JOB),
        (
            "db/templates/broken.yaml",
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  key: [unclosed\n",
        ),
    ]);
    let line = input
        .lines()
        .position(|l| l.contains("[unclosed"))
        .expect("line")
        + 1;
    let out = helm3(&["fix", "-"], &input);
    assert_refused(input.as_bytes(), &out, &format!("{line}:8"));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(WRAPPER_MARK),
        "a partly fixed stream reached stdout"
    );
    let out = helm4(&[], &input);
    assert_refused(input.as_bytes(), &out, &format!("{line}:8"));
}

#[test]
fn non_utf8_input_exits_2() {
    let mut input = helm3_stream(&[("db/templates/migrate-job.yaml", MIGRATION_JOB)]).into_bytes();
    input.extend_from_slice(b"---\nkind: ConfigMap\ndata: {k: \xff}\n");
    let out = hosts::run_bounded(
        Command::new(common::bin()).args(["fix", "-"]),
        &input,
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(2), "{}", hosts::show(&out));
    assert!(out.stdout.is_empty() || out.stdout == input);
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));
}

#[test]
fn a_job_that_cannot_be_wrapped_fails_the_release_and_names_it() {
    let job = MIGRATION_JOB.replace(
        "command: [\"/migrate\", \"--to\", \"latest\"]",
        "args: [\"--to\", \"latest\"]",
    );
    let input = helm3_stream(&[("db/templates/migrate-job.yaml", &job)]);
    let out = helm3(&["fix", "-"], &input);
    assert_eq!(out.status.code(), Some(1), "{}", hosts::show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Job/db-migrate") && stderr.contains("entrypoints"),
        "{stderr}"
    );
}

#[test]
fn a_chart_without_jobs_comes_back_byte_identical_and_quiet() {
    let input = helm3_stream(&[
        ("db/templates/serviceaccount.yaml", SERVICE_ACCOUNT),
        ("db/templates/configmap.yaml", CONFIG_MAP),
    ]);
    let out = helm3(&["fix", "-"], &input);
    assert_post_rendered(&input, &out, 0);
    assert_eq!(String::from_utf8_lossy(&out.stdout), input);
    assert!(out.stderr.is_empty(), "{}", hosts::show(&out));
}

#[test]
fn expand_env_follows_go_os_expand() {
    let mut env = BTreeMap::new();
    env.insert("HELM_PLUGIN_DIR", "/p".to_string());
    assert_eq!(expand_env("${HELM_PLUGIN_DIR}/bin", &env), "/p/bin");
    assert_eq!(expand_env("$HELM_PLUGIN_DIR/bin", &env), "/p/bin");
    assert_eq!(expand_env("$UNSET-x", &env), "-x");
    assert_eq!(expand_env("plain", &env), "plain");
}

#[test]
fn helm4_plugin_script_passes_shellcheck() {
    let Some(tool) = common::require_tool("shellcheck", "it lints the plugin's script") else {
        return;
    };
    let script = root().join("integrations/helm/post-render.sh");
    let out = hosts::run_bounded(
        Command::new(&tool).args(["-s", "sh"]).arg(&script),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
}
