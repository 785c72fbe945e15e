//! Mesh config on the command line: `--mesh-config`, and the drain note said once per run.

mod common;

use std::process::Command;

fn testdata(case: &str) -> String {
    format!(
        "{}/testdata/mesh/{case}/input.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
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
