//! Moving between strategies: `fix --strategy wrapper` then `fix --strategy none` gives back
//! every golden input of `testdata/jobs` and `testdata/linkerd`, byte for byte (the current wrapper records how its
//! argv was split; the layouts that cannot come back are those of older wrappers and
//! rewritten annotations, listed in docs/strategies.md). Also: each `original.yaml` of
//! `testdata/strategies` is what `fix` restores there, byte for byte.

mod common;

use meshjob::edit_text;
use meshjob::{Settings, StrategyChoice};

/// Settings with `strategy`, under the case's own `.meshjob.yaml` when it has one.
fn in_case(dir: &std::path::Path, strategy: StrategyChoice) -> Settings {
    let mut settings = Settings::default();
    let config = dir.join(".meshjob.yaml");
    if config.exists() {
        meshjob::load_config(&config)
            .and_then(|c| c.apply_to(&mut settings))
            .expect("the case's config");
    }
    settings.strategy = strategy;
    settings
}

/// Inputs whose fix also repairs values Istio would reject (a quoted boolean, a bare-number
/// duration): the repairs stay after `none`, so only idempotence is checked.
const REPAIRED: &[&str] = &[
    "invalid-annotation-values-are-repaired",
    "shutdown-annotation-values-linkerd-ignores-are-repaired",
];

/// Inputs with a null `args:`, which the wrapper fills with the command's words: `none`
/// gives back `command` without the null `args` line; and an empty or null `command` that
/// the `entrypoints` setting filled, which comes back as no `command` (docs/strategies.md
/// says so).
const NULL_ARGS: &[&str] = &["null-args-is-no-args", "empty-command-is-no-command"];

#[test]
fn wrapper_then_none_gives_back_the_input() {
    let mut failures = Vec::new();
    let mut exact = 0;
    let root = common::root().join("testdata");
    for dir in common::golden_cases() {
        if !(dir.starts_with(root.join("jobs")) || dir.starts_with(root.join("linkerd")))
            || dir.join("args").exists()
        {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        // Holds a hand-written `nativeSidecar: "true"`, which a forced wrapper takes out as
        // if meshjob had written it (docs/strategies.md says so).
        // The same with Linkerd's native annotations; a pod that an earlier run wrapped for
        // Istio (its wrapper comes out too); and Linkerd's control-plane values, which are
        // mesh config, not a pod fix, and which `none` leaves as they are; and a pod that an
        // earlier run wrapped already (`none` takes that wrapper out too).
        if name == "opted-out-and-uninjectable-pods-are-skipped"
            || name == "native-sidecar-annotations-skip-the-pod"
            || name == "istio-annotation-left-on-a-linkerd-pod-is-reported"
            || name == "injected-linkerd-proxy-wrapped-earlier-gets-only-the-env"
            || name.starts_with("control-plane-values-")
        {
            continue;
        }
        let input = std::fs::read_to_string(dir.join("input.yaml")).unwrap();
        let wrapped = edit_text(&input, &in_case(&dir, StrategyChoice::Wrapper));
        if wrapped.fatal.is_some() {
            continue;
        }
        let back = edit_text(&wrapped.text, &in_case(&dir, StrategyChoice::None));
        assert!(back.fatal.is_none(), "{name}: {:?}", back.fatal);
        if back.text == input {
            exact += 1;
        } else if !REPAIRED.contains(&name.as_str()) && !NULL_ARGS.contains(&name.as_str()) {
            failures.push(format!("{name}: not byte-identical\n{}", back.text));
        }
        // None on its own output changes nothing.
        let again = edit_text(&back.text, &in_case(&dir, StrategyChoice::None));
        if again.text != back.text {
            failures.push(format!("{name}: none is not idempotent"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(exact >= 15, "only {exact} inputs came back byte for byte");
}

#[test]
fn original_files_are_restored() {
    let mut n = 0;
    for dir in common::golden_cases() {
        let original = dir.join("original.yaml");
        if !original.exists() {
            continue;
        }
        n += 1;
        let want = std::fs::read(&original).unwrap();
        let got = std::fs::read(dir.join("expected.yaml")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{}",
            dir.display()
        );
    }
    assert!(
        n >= 10,
        "expected original.yaml files in testdata/strategies"
    );
}

#[test]
fn bad_strategy_flags_are_usage_errors() {
    for (args, want) in [
        (
            &["check", "--istio-version", "latest", "-"][..],
            "--istio-version: invalid version \"latest\"",
        ),
        (
            &["check", "--kubernetes-version", "1.29-rc.1", "-"][..],
            "--kubernetes-version: invalid version",
        ),
        (
            &["check", "--strategy", "sidecar", "-"][..],
            "[possible values: auto, wrapper, native, none]",
        ),
    ] {
        let out = common::run_stdin(common::meshjob().args(args), b"a: 1\n");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// Every golden output in which meshjob moved a user's sidecar to `initContainers` comes back
/// to its input, byte for byte, with `none` (which also takes out the native annotation), and
/// `none` on that changes nothing.
#[test]
fn moved_sidecars_come_back_with_none() {
    let mut n = 0;
    for dir in common::golden_cases() {
        let input = std::fs::read_to_string(dir.join("input.yaml")).unwrap();
        let Ok(fixed) = std::fs::read_to_string(dir.join("expected.yaml")) else {
            continue;
        };
        if input.contains("# meshjob: moved from containers[")
            || !fixed.contains("# meshjob: moved from containers[")
        {
            continue;
        }
        n += 1;
        let back = edit_text(&fixed, &in_case(&dir, StrategyChoice::None));
        assert!(back.fatal.is_none(), "{}: {:?}", dir.display(), back.fatal);
        assert_eq!(back.text, input, "{}", dir.display());
        let again = edit_text(&back.text, &in_case(&dir, StrategyChoice::None));
        assert_eq!(again.text, back.text, "{}", dir.display());
    }
    assert!(n >= 5, "only {n} golden cases move a sidecar");
}
