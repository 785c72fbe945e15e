//! Mesh config on the command line: `--mesh-config`, the drain note said once per run, and
//! Namespace documents that place the pods of other files in a mesh.

mod common;

use std::process::Command;

fn testdata(case: &str) -> std::path::PathBuf {
    common::root().join(format!("testdata/mesh/{case}/input.yaml"))
}

#[test]
fn drain_note_once_per_run() {
    let out = Command::new(common::bin())
        .args(["check", "--color", "never"])
        .arg(testdata("bare-mesh-config-file"))
        .arg(testdata("istio-operator-empty-spec"))
        .output()
        .expect("run meshjob");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes = stderr.matches("MINIMUM_DRAIN_DURATION").count();
    assert_eq!(notes, 1, "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("+++ b/")
            .count(),
        2
    );
}

#[test]
fn mesh_config_flag_forces_a_bare_mesh_config() {
    let run = |extra: &[&str]| {
        let out = Command::new(common::bin())
            .args(["diff", "--color", "never"])
            .args(extra)
            .arg(testdata("mesh-config-look-alike-is-left-alone"))
            .output()
            .expect("run meshjob");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run(&[]).is_empty());
    assert!(run(&["--mesh-config"]).contains("+    EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\""));
}

/// A Namespace document in one file places the pods of a Job in another file of the same
/// run in its mesh; without it the Job is an Istio pod (the default mesh).
#[test]
fn a_namespace_in_another_file_places_the_pods() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ns = dir.path().join("namespace.yaml");
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &ns,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations:\n    linkerd.io/inject: enabled\n",
    )
    .unwrap();
    std::fs::write(
        &job,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: batch\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: alpine\n        command: [sh, -c, \"echo done\"]\n      restartPolicy: Never\n",
    )
    .unwrap();
    let diff = |files: &[&std::path::Path]| {
        let out = Command::new(common::bin())
            .args(["diff", "--color", "never"])
            .args(files)
            .output()
            .expect("run meshjob");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let both = diff(&[&ns, &job]);
    assert!(
        both.contains("config.linkerd.io/proxy-admin-shutdown: enabled"),
        "{both}"
    );
    assert!(both.contains("for q in localhost:4191/shutdown;"), "{both}");
    assert!(!both.contains("proxy.istio.io/config"), "{both}");
    // The order of the files does not matter.
    assert_eq!(diff(&[&job, &ns]).len(), both.len());
    let alone = diff(&[&job]);
    assert!(alone.contains("proxy.istio.io/config"), "{alone}");
    assert!(
        alone.contains("for q in localhost:15020/quitquitquit;"),
        "{alone}"
    );
}
