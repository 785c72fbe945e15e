//! The Argo CD config management plugins in integrations/argocd: each `generate` command is
//! run as Argo CD's cmp-server runs it (`command` then `args`, in the application's source
//! directory, with the ARGOCD_* environment), with a stub `kustomize` or `helm` on PATH that
//! prints a fixture, so the test needs neither a cluster nor those tools.

mod common;

use common::{hosts, root};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn plugin(name: &str) -> Value {
    let path = root().join("integrations/argocd").join(name);
    let text = std::fs::read_to_string(&path).expect("plugin file");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const RENDERED: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    kustomize.config.k8s.io/id: |
      kind: ConfigMap
data:
  a: \"1\"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - command:
        - /migrate
        - --to=latest
        image: registry.example/migrate:2.1
        name: migrate
";

/// A source directory with `marker` in it, and a bin directory with a stub `tool` that
/// records its arguments and prints `stream` (or fails when `stream` is None).
struct Sandbox {
    tmp: tempfile::TempDir,
}

impl Sandbox {
    fn new(marker: &str, tool: &str, stream: Option<&str>) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let src = tmp.path().join("src");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&src).expect("mkdir");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::write(src.join(marker), "# the application's source\n").expect("write");
        let body = match stream {
            Some(s) => {
                std::fs::write(tmp.path().join("rendered.yaml"), s).expect("write");
                format!("cat '{}'", tmp.path().join("rendered.yaml").display())
            }
            None => format!("echo '{tool}: cannot render' >&2\nexit 1"),
        };
        let stub = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" >'{}'\n{body}\n",
            tmp.path().join("args").display()
        );
        let stub_path = bin.join(tool);
        std::fs::write(&stub_path, stub).expect("write stub");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stub_path, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        Sandbox { tmp }
    }

    /// The stub's working directory and arguments, one a line.
    fn stub_args(&self) -> Vec<String> {
        std::fs::read_to_string(self.tmp.path().join("args"))
            .expect("the stub ran")
            .lines()
            .map(String::from)
            .collect()
    }

    /// Runs the plugin's generate command with `shell` standing in for `sh` when given.
    fn generate(&self, plugin: &Value, shell: Option<&Path>, env: &[(&str, &str)]) -> Output {
        let gen_ = &plugin["spec"]["generate"];
        let mut argv: Vec<String> = gen_["command"]
            .as_array()
            .expect("generate.command")
            .iter()
            .chain(gen_["args"].as_array().into_iter().flatten())
            .map(|v| v.as_str().expect("strings").to_string())
            .collect();
        assert_eq!(argv[0], "sh", "the generate command runs sh");
        let mut cmd = match shell {
            Some(s) => {
                argv.remove(0);
                let mut c = Command::new(s);
                if s.ends_with("busybox") {
                    c.arg("sh");
                }
                c
            }
            None => Command::new(argv.remove(0)),
        };
        let bin_dir = common::bin().parent().expect("bin dir").to_path_buf();
        let path = std::env::join_paths([
            self.tmp.path().join("bin"),
            bin_dir,
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin"),
        ])
        .expect("PATH");
        cmd.args(&argv)
            .current_dir(self.tmp.path().join("src"))
            .env_clear()
            .env("PATH", path)
            .env("TMPDIR", self.tmp.path())
            .env("ARGOCD_APP_NAME", "db")
            .env("ARGOCD_APP_NAMESPACE", "data");
        for (k, v) in env {
            cmd.env(k, v);
        }
        hosts::run_bounded(&mut cmd, b"", LIMIT)
    }

    /// No temporary file is left behind.
    fn assert_clean(&self) {
        let left: Vec<_> = std::fs::read_dir(self.tmp.path())
            .expect("readdir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| !["src", "bin", "args", "rendered.yaml"].contains(&n.as_str()))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// What `meshjob fix -` makes of the rendered stream.
fn fixed(stream: &str) -> String {
    let out = hosts::run_bounded(
        Command::new(common::bin()).args(["fix", "-"]),
        stream.as_bytes(),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", hosts::show(&out));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `sh` as the plugin names it, then every other POSIX shell a sidecar image might have.
fn shells() -> Vec<Option<PathBuf>> {
    let mut v = vec![None];
    for s in ["dash", "busybox", "bash"] {
        if let Some(p) = common::which(s) {
            v.push(Some(p));
        }
    }
    v
}

#[test]
fn plugins_are_config_management_plugins_with_discovery() {
    for (file, marker) in [
        ("meshjob-kustomize.yaml", "./kustomization.yaml"),
        ("meshjob-helm.yaml", "./Chart.yaml"),
    ] {
        let p = plugin(file);
        assert_eq!(p["apiVersion"], "argoproj.io/v1alpha1", "{file}");
        assert_eq!(p["kind"], "ConfigManagementPlugin", "{file}");
        assert_eq!(
            p["metadata"]["name"].as_str(),
            file.strip_suffix(".yaml"),
            "{file}: the name Applications use is the file's"
        );
        assert_eq!(p["spec"]["discover"]["fileName"], marker, "{file}");
    }
    let patch = plugin("repo-server-patch.yaml");
    let mounts = patch["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .flat_map(|c| c["volumeMounts"].as_array().expect("volumeMounts"))
        .filter_map(|m| m["subPath"].as_str())
        .collect::<Vec<_>>();
    assert_eq!(mounts, ["meshjob-kustomize.yaml", "meshjob-helm.yaml"]);
}

#[test]
fn kustomize_plugin_generates_the_fixed_stream() {
    let want = fixed(RENDERED);
    assert!(want.contains("# meshjob-wrapper v"), "{want}");
    for shell in shells() {
        let sb = Sandbox::new("kustomization.yaml", "kustomize", Some(RENDERED));
        let out = sb.generate(&plugin("meshjob-kustomize.yaml"), shell.as_deref(), &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{shell:?}: {}",
            hosts::show(&out)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{shell:?}");
        let args = sb.stub_args();
        assert!(args[0].ends_with("/src"), "{args:?}");
        assert_eq!(args[1..], ["build", "."]);
        sb.assert_clean();
    }
}

#[test]
fn helm_plugin_generates_the_fixed_stream_with_the_app_name_and_extra_args() {
    let want = fixed(RENDERED);
    for shell in shells() {
        let sb = Sandbox::new("Chart.yaml", "helm", Some(RENDERED));
        let out = sb.generate(
            &plugin("meshjob-helm.yaml"),
            shell.as_deref(),
            &[("ARGOCD_ENV_HELM_ARGS", "--values values-*.yaml  --set a=b")],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{shell:?}: {}",
            hosts::show(&out)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{shell:?}");
        assert_eq!(
            sb.stub_args()[1..],
            [
                "template",
                "db",
                ".",
                "--namespace",
                "data",
                "--values",
                "values-*.yaml",
                "--set",
                "a=b"
            ]
        );
        sb.assert_clean();
    }
    // Without HELM_ARGS.
    let sb = Sandbox::new("Chart.yaml", "helm", Some(RENDERED));
    let out = sb.generate(&plugin("meshjob-helm.yaml"), None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", hosts::show(&out));
    assert_eq!(
        sb.stub_args()[1..],
        ["template", "db", ".", "--namespace", "data"]
    );
}

#[test]
fn a_failed_render_fails_the_generate_command_with_no_output() {
    for (file, marker, tool) in [
        ("meshjob-kustomize.yaml", "kustomization.yaml", "kustomize"),
        ("meshjob-helm.yaml", "Chart.yaml", "helm"),
    ] {
        for shell in shells() {
            let sb = Sandbox::new(marker, tool, None);
            let out = sb.generate(&plugin(file), shell.as_deref(), &[]);
            assert_ne!(out.status.code(), Some(0), "{file} {shell:?}");
            assert!(
                out.stdout.is_empty(),
                "{file} {shell:?}: {}",
                hosts::show(&out)
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("cannot render"),
                "{file} {shell:?}: {}",
                hosts::show(&out)
            );
            sb.assert_clean();
        }
    }
}

#[test]
fn a_stream_meshjob_refuses_fails_the_generate_command() {
    let sb = Sandbox::new(
        "kustomization.yaml",
        "kustomize",
        Some("kind: ConfigMap\ndata: {a: [\n"),
    );
    let out = sb.generate(&plugin("meshjob-kustomize.yaml"), None, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", hosts::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("-:2:"),
        "{}",
        hosts::show(&out)
    );
}

#[test]
fn generate_scripts_pass_shellcheck() {
    let Some(tool) = common::require_tool("shellcheck", "it lints the plugins' scripts") else {
        return;
    };
    for file in ["meshjob-kustomize.yaml", "meshjob-helm.yaml"] {
        let p = plugin(file);
        let script = p["spec"]["generate"]["args"][0].as_str().expect("script");
        let out = hosts::run_bounded(
            Command::new(&tool).args(["-s", "sh", "-"]),
            script.as_bytes(),
            LIMIT,
        );
        assert!(out.status.success(), "{file}: {}", hosts::show(&out));
    }
}

/// hadolint as the tests run it on every Dockerfile.
fn hadolint(tool: &Path, name: &str, text: &str) {
    let out = hosts::run_bounded(
        Command::new(tool).args(["--no-color", "-"]),
        text.as_bytes(),
        LIMIT,
    );
    assert!(
        out.status.success(),
        "hadolint {name}: {}",
        hosts::show(&out)
    );
}

/// The repository's Dockerfile.
fn dockerfile() -> String {
    std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile")
}

/// Every ```Dockerfile block of docs/argocd-flux.md, with the list indentation removed.
fn documented_dockerfiles() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/argocd-flux.md")).expect("doc");
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for line in doc.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            None if trimmed == "```Dockerfile" => {
                current = Some((line.len() - trimmed.len(), Vec::new()));
            }
            Some((_, lines)) if trimmed == "```" => {
                blocks.push(lines.join("\n") + "\n");
                current = None;
            }
            Some((indent, lines)) => {
                lines.push(line.get(*indent..).unwrap_or("").to_string());
            }
            None => {}
        }
    }
    blocks
}

/// The instructions of one build stage: from its `FROM` line up to the next `FROM`, comments
/// and blank lines left out. `stage` is the name after `AS`, or None for the first stage.
fn stage(text: &str, name: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("FROM ") {
            if inside {
                break;
            }
            inside = match name {
                Some(n) => line.ends_with(&format!(" AS {n}")),
                None => true,
            };
        }
        if inside {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn dockerfiles_pass_hadolint() {
    let Some(tool) = common::require_tool("hadolint", "it lints the Dockerfiles") else {
        return;
    };
    hadolint(&tool, "Dockerfile", &dockerfile());
    let documented = documented_dockerfiles();
    assert_eq!(documented.len(), 1, "the sidecar example of the docs");
    for (i, text) in documented.iter().enumerate() {
        hadolint(&tool, &format!("docs/argocd-flux.md block {i}"), text);
    }
    // The linter itself is awake: the example the docs used to give is rejected.
    let old = "FROM alpine:3\nCOPY meshjob /usr/local/bin/meshjob   # a release binary\n";
    let out = hosts::run_bounded(
        Command::new(&tool).args(["--no-color", "-"]),
        old.as_bytes(),
        LIMIT,
    );
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stdout).contains("DL3021"),
        "{}",
        hosts::show(&out)
    );
}

/// The sidecar image (the Dockerfile's `argocd-cmp` stage, and the docs' example built on
/// the release image) has what the generate commands call, as the user the patch runs as.
#[test]
fn the_sidecar_image_provides_what_the_generate_commands_call() {
    let patch = plugin("repo-server-patch.yaml");
    let users: Vec<i64> = patch["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| {
            c["securityContext"]["runAsUser"]
                .as_i64()
                .expect("runAsUser")
        })
        .collect();
    assert_eq!(users, [999, 999]);
    for file in ["meshjob-kustomize.yaml", "meshjob-helm.yaml"] {
        let p = plugin(file);
        assert_eq!(p["spec"]["generate"]["command"][0], "sh", "{file}");
        let script = p["spec"]["generate"]["args"][0].as_str().expect("script");
        assert!(script.contains("meshjob fix - <"), "{file}: {script}");
        assert!(script.contains("$(mktemp)"), "{file}: {script}");
    }

    let built = stage(&dockerfile(), Some("argocd-cmp"));
    let documented = stage(&documented_dockerfiles()[0], None);
    for (name, lines) in [("Dockerfile", &built), ("docs", &documented)] {
        // Alpine's sh and mktemp are busybox's, which the generate tests run under.
        assert!(lines[0].starts_with("FROM alpine:3."), "{name}: {lines:?}");
        assert!(
            lines.contains(&"RUN apk add --no-cache kustomize helm".to_string()),
            "{name}: {lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("COPY --from=")
                && (l.ends_with(" /usr/local/bin/meshjob /usr/local/bin/meshjob")
                    || l.ends_with(" /out/meshjob /usr/local/bin/meshjob"))),
            "{name}: meshjob goes to /usr/local/bin, on Alpine's PATH: {lines:?}"
        );
        assert_eq!(lines.last().map(String::as_str), Some("USER 999"), "{name}");
    }
    assert_eq!(
        built[0].trim_end_matches(" AS argocd-cmp"),
        documented[0],
        "the docs' example and the Dockerfile use the same base"
    );
    assert!(documented[2].contains("--from=ghcr.io/"), "{documented:?}");
}
