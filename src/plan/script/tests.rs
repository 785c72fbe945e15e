use super::text::done_name;
use super::*;

fn local_quit() -> QuitEndpoint {
    QuitEndpoint {
        host: "localhost".into(),
        port: 15020,
        path: "/quitquitquit".into(),
    }
}

/// Every combination of the options, with some awkward values mixed in.
fn all_option_sets() -> Vec<ScriptOptions> {
    let quits = [
        local_quit(),
        QuitEndpoint {
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/a$(b)$$c'd?x=$HOME".into(),
        },
    ];
    let peer_sets = [
        None,
        Some(Peers {
            dir: "/var/run/meshjob".into(),
            me: "main".into(),
            all: vec!["main".into(), "side".into()],
        }),
        Some(Peers {
            dir: "/tmp/$(x)/$$/it's".into(),
            me: "a$(b)".into(),
            all: (0..40).map(|i| format!("container-{i}")).collect(),
        }),
    ];
    let mut out = Vec::new();
    for quit in &quits {
        for stop_proxy_on_failure in [true, false] {
            for peers in &peer_sets {
                for wait_for_proxy_seconds in [None, Some(0), Some(30)] {
                    out.push(ScriptOptions {
                        quit: quit.clone(),
                        stop_proxy_on_failure,
                        peers: peers.clone(),
                        wait_for_proxy_seconds,
                    });
                }
            }
        }
    }
    out
}

#[test]
fn no_kubernetes_expansion_anywhere() {
    for opts in all_option_sets() {
        let s = render(&opts);
        assert!(!s.contains("$$"), "`$$` in script for {opts:?}:\n{s}");
        assert!(!s.contains("$("), "`$(` in script for {opts:?}:\n{s}");
    }
}

#[test]
fn fits_in_a_yaml_literal_block() {
    for opts in all_option_sets() {
        let s = render(&opts);
        assert!(s.ends_with('\n') && !s.ends_with("\n\n"), "{opts:?}");
        assert!(!s.starts_with([' ', '\n']), "{opts:?}");
        for (n, line) in s.lines().enumerate() {
            let at = format!("line {} of script for {opts:?}: {line:?}", n + 1);
            assert!(line.chars().count() < 100, "too long: {at}");
            assert!(!line.ends_with([' ', '\t']), "trailing whitespace: {at}");
            assert!(
                !line.chars().any(char::is_control),
                "control character: {at}"
            );
            assert!(line.is_empty() || !line.trim().is_empty(), "blank: {at}");
            assert!(line.is_ascii(), "non-ASCII: {at}");
        }
    }
}

#[test]
fn marker_version_round_trip() {
    for opts in all_option_sets() {
        let s = render(&opts);
        assert!(s.starts_with(&format!("{MARKER_PREFIX}{WRAPPER_VERSION}:")));
        assert_eq!(marker_version(&s), Some(WRAPPER_VERSION));
    }
    assert_eq!(
        marker_version("# meshjob-wrapper v7: later\nexit 0\n"),
        Some(7)
    );
    assert_eq!(marker_version("# meshjob-wrapper v12"), Some(12));
    assert_eq!(marker_version(""), None);
    assert_eq!(marker_version("exec \"$@\"\n"), None);
    assert_eq!(marker_version("# meshjob-wrapper v: x\n"), None);
    assert_eq!(marker_version("# meshjob-wrapper v1x: x\n"), None);
    assert_eq!(marker_version("\n# meshjob-wrapper v1: x\n"), None);
    assert_eq!(marker_version(" # meshjob-wrapper v1: x\n"), None);
    assert_eq!(marker_version("# meshjob-wrapper v99999999999: x\n"), None);
}

#[test]
fn baked_values_are_quoted() {
    let opts = ScriptOptions {
        quit: QuitEndpoint {
            host: "localhost".into(),
            port: 15020,
            path: "/it's/$(x)".into(),
        },
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy_seconds: None,
    };
    let s = render(&opts);
    assert!(s.contains("quit_path='/it'\\''s/$''(x)'\n"), "{s}");
}

#[test]
fn done_names_are_plain_and_one_to_one() {
    assert_eq!(done_name("main"), "main");
    assert_eq!(done_name("my-app.v2"), "my-app.v2");
    assert_eq!(done_name("a_b"), "a_5fb");
    assert_eq!(done_name("a/b"), "a_2fb");
    assert_eq!(done_name("$(x)"), "_24_28x_29");
    assert_eq!(done_name(""), "_");
    assert_ne!(done_name("a_2fb"), done_name("a/b"));
}

#[test]
fn sections_follow_the_options() {
    let mut opts = ScriptOptions {
        quit: local_quit(),
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy_seconds: None,
    };
    let plain = render(&opts);
    assert!(!plain.contains("restartPolicy OnFailure"));
    assert!(!plain.contains("peers_dir"));
    assert!(!plain.contains("wait_for_proxy"));
    opts.stop_proxy_on_failure = false;
    opts.wait_for_proxy_seconds = Some(12);
    opts.peers = Some(Peers {
        dir: "/var/run/meshjob".into(),
        me: "b".into(),
        all: vec!["a".into()],
    });
    let full = render(&opts);
    assert!(full.contains("restartPolicy OnFailure"));
    assert!(full.contains("sleep 12 &"));
    assert!(full.contains("peers_dir='/var/run/meshjob'\n"));
    // `me` is always among the names checked, even when the caller left it out.
    assert!(full.contains("for peer in a b; do"), "{full}");
}

#[test]
#[should_panic(expected = "control character")]
fn control_characters_in_values_panic() {
    let opts = ScriptOptions {
        quit: local_quit(),
        stop_proxy_on_failure: true,
        peers: Some(Peers {
            dir: "/tmp/a\nb".into(),
            me: "a".into(),
            all: vec!["a".into()],
        }),
        wait_for_proxy_seconds: None,
    };
    render(&opts);
}
