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
