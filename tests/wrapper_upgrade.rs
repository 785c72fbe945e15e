//! An existing wrapper in a manifest: meshjob replaces a body it wrote (version 1, 2 or 3,
//! any settings) with the current one, in place, and records in the marker how much of the argv
//! was `command`. A body it did not write as it stands (edited by hand) is left alone, with
//! a warning.

mod common;

use meshjob::script::v1::{self, V1Options};
use meshjob::script::{
    ARG0, ArgvOrigin, Peers, SHELL, ScriptOptions, WRAPPER_VERSION, original_argv, parse_quit_url,
    render, v2,
};
use std::io::Write;
use std::process::{Command, Stdio};

/// A Job whose containers are already wrapped with the given scripts; each has `args`
/// `python -m job`.
fn job(scripts: &[(&str, String)], on_failure: bool) -> String {
    let mut out = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    \
         metadata:\n      annotations:\n        proxy.istio.io/config: |\n          \
         holdApplicationUntilProxyStarts: true\n          terminationDrainDuration: 5s\n          \
         proxyMetadata:\n            EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\"\n    spec:\n      \
         restartPolicy: {}\n      containers:\n",
        if on_failure { "OnFailure" } else { "Never" }
    );
    for (name, script) in scripts {
        out.push_str(&format!(
            "      - name: {name}\n        image: python\n        command:\n        - {SHELL}\n        \
             - -c\n        - |\n"
        ));
        for line in script.lines() {
            out.push_str(&format!("          {line}\n"));
        }
        out.push_str(&format!(
            "        - {ARG0}\n        args:\n        - python\n        - -m\n        - job\n"
        ));
    }
    if scripts.len() > 1 {
        out.push_str(
            "        volumeMounts:\n        - name: meshjob\n          mountPath: /var/run/meshjob\n",
        );
    }
    out
}

struct Fixed {
    stdout: String,
    stderr: String,
    code: i32,
}

fn fix(input: &str) -> Fixed {
    let mut child = Command::new(common::bin())
        .args(["fix", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run meshjob");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    Fixed {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn v1_default() -> V1Options {
    V1Options {
        quit: parse_quit_url("http://localhost:15020/quitquitquit").expect("url"),
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy_seconds: None,
    }
}

/// The settings of a version 1 script, for a container whose whole argv (3 words) was its
/// `command`.
fn options_for(v1: &V1Options) -> ScriptOptions {
    ScriptOptions {
        quit: v1.quit.clone(),
        also: Vec::new(),
        stop_proxy_on_failure: v1.stop_proxy_on_failure,
        peers: v1.peers.clone(),
        wait_for_proxy: None,
        origin: ArgvOrigin::Command(3),
        command_style: Default::default(),
    }
}

/// The current script meshjob writes for such a container.
fn current_for(v1: &V1Options) -> String {
    render(&options_for(v1))
}

fn indented(script: &str) -> String {
    script.lines().map(|l| format!("          {l}\n")).collect()
}

#[test]
fn a_v1_wrapper_is_replaced_in_place() {
    let old = v1_default();
    let fixed = fix(&job(&[("main", v1::render(&old))], false));
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let want = job(&[("main", current_for(&old))], false);
    assert_eq!(fixed.stdout, want, "stderr: {}", fixed.stderr);
    // Running again changes nothing.
    let again = fix(&fixed.stdout);
    assert_eq!(again.stdout, fixed.stdout);
}

#[test]
fn a_v2_wrapper_is_replaced_in_place() {
    for on_failure in [false, true] {
        let old = V1Options {
            stop_proxy_on_failure: !on_failure,
            ..v1_default()
        };
        let fixed = fix(&job(
            &[("main", v2::render(&options_for(&old)))],
            on_failure,
        ));
        assert_eq!(fixed.code, 0, "{}", fixed.stderr);
        let want = job(&[("main", current_for(&old))], on_failure);
        assert_eq!(fixed.stdout, want, "stderr: {}", fixed.stderr);
        assert!(
            fixed
                .stdout
                .contains(&format!("meshjob-wrapper v{WRAPPER_VERSION}: command=3\n"))
        );
        let again = fix(&fixed.stdout);
        assert_eq!(again.stdout, fixed.stdout);
    }
}

#[test]
fn v1_wrappers_of_two_containers_under_on_failure_are_replaced() {
    let pair = |me: &str| V1Options {
        stop_proxy_on_failure: false,
        peers: Some(Peers {
            dir: "/var/run/meshjob".into(),
            me: me.into(),
            all: vec!["a".into(), "b".into()],
        }),
        ..v1_default()
    };
    let input = job(
        &[("a", v1::render(&pair("a"))), ("b", v1::render(&pair("b")))],
        true,
    );
    let fixed = fix(&input);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    for me in ["a", "b"] {
        let new = indented(&current_for(&pair(me)));
        assert!(fixed.stdout.contains(&new), "{me}:\n{}", fixed.stdout);
    }
    assert!(!fixed.stdout.contains("meshjob-wrapper v1"));
}

#[test]
fn a_hand_edited_wrapper_is_left_alone_with_a_warning() {
    let edited = v1::render(&v1_default()).replace("for try in 1 2 3", "for try in 1 2 3 4 5");
    let input = job(&[("main", edited)], false);
    let fixed = fix(&input);
    assert_eq!(fixed.stdout, input, "stderr: {}", fixed.stderr);
    assert!(
        fixed.stderr.contains("warning:") && fixed.stderr.contains("did not write"),
        "{}",
        fixed.stderr
    );

    // The same for a version 2 body and a current one.
    for body in [
        v2::render(&options_for(&v1_default())),
        current_for(&v1_default()),
    ] {
        let edited = body.replace("sleep 1", "sleep 5");
        let input = job(&[("main", edited)], false);
        let fixed = fix(&input);
        assert_eq!(fixed.stdout, input, "stderr: {}", fixed.stderr);
        assert!(fixed.stderr.contains("did not write"), "{}", fixed.stderr);
    }
}

/// A fresh wrap records the split; `original_argv` gives the manifest's argv back.
#[test]
fn the_original_argv_can_be_read_back_from_a_fresh_wrap() {
    let input = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    \
                 spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        \
                 image: python\n        command: [python, -m]\n        args: [job, --fast]\n";
    let fixed = fix(input);
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    assert!(
        fixed.stdout.contains(&format!(
            "# meshjob-wrapper v{WRAPPER_VERSION}: command=2 flow=[*, *]\n"
        )),
        "{}",
        fixed.stdout
    );
    // The script is the third item of `command`; `args` is the whole argv.
    let script_start = fixed.stdout.find("# meshjob-wrapper").expect("marker");
    let indent = fixed.stdout[..script_start]
        .rsplit('\n')
        .next()
        .map_or(0, str::len);
    let script: String = fixed.stdout[script_start - indent..]
        .lines()
        .take_while(|l| l.len() > indent && l[..indent].trim().is_empty())
        .map(|l| format!("{}\n", &l[indent..]))
        .collect();
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let command = vec![SHELL.to_string(), "-c".into(), script, ARG0.into()];
    let back = original_argv(&command, &words(&["python", "-m", "job", "--fast"]))
        .expect("a wrapper meshjob reads");
    assert_eq!(back.command, Some(words(&["python", "-m"])));
    assert_eq!(back.args, Some(words(&["job", "--fast"])));
}
