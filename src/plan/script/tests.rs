use super::quote::{done_name, undo_done_name};
use super::v1::V1Options;
use super::*;

fn local_quit() -> Endpoint {
    Endpoint {
        host: "localhost".into(),
        port: 15020,
        path: "/quitquitquit".into(),
    }
}

fn ready() -> Endpoint {
    parse_quit_url(crate::mesh::istio::READY_URL).unwrap()
}

fn default_options() -> ScriptOptions {
    ScriptOptions {
        quit: local_quit(),
        also: Vec::new(),
        stop_proxy_on_failure: true,
        peers: None,
        wait_for_proxy: None,
        origin: ArgvOrigin::Command(1),
        command_style: CommandStyle::Block,
    }
}

/// The same settings for the frozen version 1 renderer.
fn as_v1(o: &ScriptOptions) -> V1Options {
    V1Options {
        quit: o.quit.clone(),
        stop_proxy_on_failure: o.stop_proxy_on_failure,
        peers: o.peers.clone(),
        wait_for_proxy_seconds: o.wait_for_proxy.as_ref().map(|w| w.seconds),
    }
}

/// Every combination of the options, with some awkward values mixed in.
fn all_option_sets() -> Vec<ScriptOptions> {
    let quits = [
        local_quit(),
        Endpoint {
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
    let layout = |open: &str, sep: &str, close: &str| {
        CommandStyle::Flow(Some(FlowLayout {
            open: open.into(),
            sep: sep.into(),
            close: close.into(),
        }))
    };
    let styles = [
        CommandStyle::Block,
        CommandStyle::Flow(None),
        layout("", ", ", ""),
        layout(" ", " , ", " "),
        layout("", ",", ","),
    ];
    let mut out = Vec::new();
    for quit in &quits {
        for stop_proxy_on_failure in [true, false] {
            for peers in &peer_sets {
                for wait_for_proxy_seconds in [None, Some(0), Some(30)] {
                    for origin in [
                        ArgvOrigin::Command(1),
                        ArgvOrigin::Command(12),
                        ArgvOrigin::Entrypoint(2),
                        ArgvOrigin::WholeArgv,
                    ] {
                        for command_style in &styles {
                            // Only a `command` moved in front of `args` has a style.
                            if *command_style != CommandStyle::Block
                                && !matches!(origin, ArgvOrigin::Command(_))
                            {
                                continue;
                            }
                            out.push(ScriptOptions {
                                quit: quit.clone(),
                                also: Vec::new(),
                                stop_proxy_on_failure,
                                peers: peers.clone(),
                                wait_for_proxy: wait_for_proxy_seconds.map(|seconds| ReadyWait {
                                    seconds,
                                    ready: ready(),
                                }),
                                origin,
                                command_style: command_style.clone(),
                            });
                        }
                    }
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
        let want = Marker {
            version: WRAPPER_VERSION,
            origin: opts.origin,
            style: Some(opts.command_style.clone()),
        };
        assert_eq!(marker(&s), Some(want));
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
    let mut opts = default_options();
    opts.quit.path = "/it's/$(x)".into();
    let s = render(&opts);
    assert!(
        s.contains("for q in 'localhost:15020/it'\\''s/$''(x)'; do"),
        "{s}"
    );
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
    for name in ["main", "a_b", "a/b", "$(x)", "", "caf\u{e9}", "_", "a_2fb"] {
        assert_eq!(undo_done_name(&done_name(name)).as_deref(), Some(name));
    }
    for file in ["a_", "a_2", "a_zz", "a_61", "_ff"] {
        assert_eq!(undo_done_name(file), None, "{file}");
    }
}

#[test]
fn sections_follow_the_options() {
    let mut opts = default_options();
    let plain = render(&opts);
    assert!(!plain.contains("[ \"$e\" = 0 ] || exit"));
    assert!(!plain.contains("\nd="));
    assert!(!plain.contains("ask GET"));
    opts.stop_proxy_on_failure = false;
    opts.wait_for_proxy = Some(ReadyWait {
        seconds: 12,
        ready: ready(),
    });
    opts.peers = Some(Peers {
        dir: "/var/run/meshjob".into(),
        me: "b".into(),
        all: vec!["a".into()],
    });
    let full = render(&opts);
    assert!(full.contains("[ \"$e\" = 0 ] || exit \"$e\"\n"));
    assert!(full.contains("sleep 12 & w=$!\n"));
    assert!(
        full.contains("ask GET localhost:15021 /healthz/ready "),
        "{full}"
    );
    assert!(full.contains("\nd=/var/run/meshjob\n"));
    // `me` is always among the names checked, even when the caller left it out.
    assert!(full.contains("for p in a b; do"), "{full}");
}

/// The readiness URL is a parameter (the mesh's facts), not a constant of the script.
#[test]
fn the_ready_endpoint_comes_from_the_caller() {
    let mut opts = default_options();
    opts.wait_for_proxy = Some(ReadyWait {
        seconds: 5,
        ready: parse_quit_url("http://127.0.0.1:4191/ready").unwrap(),
    });
    let s = render(&opts);
    assert!(s.contains("ask GET 127.0.0.1:4191 /ready "), "{s}");
    assert!(!s.contains("15021"), "{s}");
}

/// The size budget of the default script: one wrapped container, default settings.
#[test]
#[allow(clippy::print_stderr)] // the test prints the size it measured
fn the_default_script_is_small() {
    let one = render(&default_options());
    let mut two = default_options();
    two.peers = Some(Peers {
        dir: "/var/run/meshjob".into(),
        me: "main".into(),
        all: vec!["main".into(), "side".into()],
    });
    let two = render(&two);
    let v1 = v1::render(&as_v1(&default_options()));
    eprintln!(
        "wrapper v{WRAPPER_VERSION}, one container: {} lines, {} bytes; each of two \
         containers: {} lines, {} bytes (v1: {} lines, {} bytes)",
        one.lines().count(),
        one.len(),
        two.lines().count(),
        two.len(),
        v1.lines().count(),
        v1.len()
    );
    assert!(one.lines().count() <= 40, "{one}");
    assert!(one.len() <= 2048, "{} bytes:\n{one}", one.len());
}

#[test]
fn every_rendered_script_is_recognised_as_genuine() {
    for opts in all_option_sets() {
        let s = render(&opts);
        assert!(is_genuine(&s), "v4 not recognised for {opts:?}:\n{s}");
        let old = v3::render(&opts);
        assert!(is_genuine(&old), "v3 not recognised for {opts:?}:\n{old}");
        let old = v2::render(&opts);
        assert!(is_genuine(&old), "v2 not recognised for {opts:?}:\n{old}");
        let old = v1::render(&as_v1(&opts));
        assert!(is_genuine(&old), "v1 not recognised for {opts:?}:\n{old}");
    }
}

#[test]
fn an_edited_body_is_not_genuine() {
    let mut samples = Vec::new();
    for opts in all_option_sets().into_iter().step_by(7) {
        samples.push(render(&opts));
        samples.push(v2::render(&opts));
        samples.push(v1::render(&as_v1(&opts)));
    }
    for s in samples {
        let lines: Vec<&str> = s.lines().collect();
        let edits = [
            s.replacen("exit", "exit ", 1),
            s.replacen("sleep 1", "sleep 2", 1),
            format!("{s}echo done\n"),
            s.replacen('\n', "\nset -x\n", 1),
            lines[..lines.len() - 1].join("\n") + "\n",
            s.replacen("3", "4", 1),
            s.replace("meshjob: ", "job: "),
        ];
        for e in edits {
            assert_ne!(e, s);
            assert!(!is_genuine(&e), "an edit passes as genuine:\n{e}");
        }
    }
    assert!(!is_genuine("# meshjob-wrapper v1: x\nexec \"$@\"\n"));
    assert!(!is_genuine(
        "# meshjob-wrapper v2: command=1\nexec \"$@\"\n"
    ));
    assert!(!is_genuine(
        "# meshjob-wrapper v3: command=1\nexec \"$@\"\n"
    ));
    assert!(!is_genuine("# meshjob-wrapper v4: command=1\n"));
    assert!(!is_genuine("# meshjob-wrapper v5: command=1\n"));
    // A version 2 body under a version 3 marker, and the other way round; the same for
    // versions 3 and 4.
    let opts = default_options();
    let v3_marked = v2::render(&opts).replacen("v2:", "v3:", 1);
    assert!(!is_genuine(&v3_marked));
    let v2_marked = v3::render(&opts).replacen("v3:", "v2:", 1);
    assert!(!is_genuine(&v2_marked));
    let v4_marked = v3::render(&opts).replacen("v3:", "v4:", 1);
    assert!(!is_genuine(&v4_marked));
    let v3_marked = render(&opts).replacen("v4:", "v3:", 1);
    assert!(!is_genuine(&v3_marked));
    assert!(!is_genuine("exec \"$@\"\n"));
}

/// The version 1 text is frozen: meshjob must keep recognising what it once wrote. The
/// hash covers every option set above; it was taken from the released version 1 renderer.
#[test]
fn the_v1_text_is_frozen() {
    let mut all = String::new();
    for opts in all_option_sets() {
        if opts.origin == ArgvOrigin::Command(1) && opts.command_style == CommandStyle::Block {
            all.push_str(&v1::render(&as_v1(&opts)));
        }
    }
    assert_eq!(fnv1a(&all), V1_HASH, "{} bytes", all.len());
}

/// FNV-1a, 64 bits, in hex.
fn fnv1a(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

const V1_HASH: &str = "7e652c204d8d13c5";

/// The version 2 text is frozen in the same way; the hash covers every option set above and
/// was taken from the released version 2 renderer.
#[test]
fn the_v2_text_is_frozen() {
    let all: String = all_option_sets()
        .iter()
        .filter(|o| o.command_style == CommandStyle::Block)
        .map(v2::render)
        .collect();
    assert_eq!(fnv1a(&all), V2_HASH, "{} bytes", all.len());
}

const V2_HASH: &str = "4d7a58ba1325ccc5";

#[test]
fn markers_are_read() {
    let m = |s: &str| marker(s);
    assert_eq!(
        m("# meshjob-wrapper v1: runs the task\n"),
        Some(Marker {
            version: 1,
            origin: ArgvOrigin::WholeArgv,
            style: None,
        })
    );
    assert_eq!(
        m("# meshjob-wrapper v2: command=3\n"),
        Some(Marker {
            version: 2,
            origin: ArgvOrigin::Command(3),
            style: None,
        })
    );
    assert_eq!(
        m("# meshjob-wrapper v2: entrypoint=0 more\n").map(|m| m.origin),
        Some(ArgvOrigin::Entrypoint(0))
    );
    assert_eq!(
        m("# meshjob-wrapper v2: command=all\n").map(|m| m.origin),
        Some(ArgvOrigin::WholeArgv)
    );
    assert_eq!(
        m("# meshjob-wrapper v3: entrypoint=2\n"),
        Some(Marker {
            version: 3,
            origin: ArgvOrigin::Entrypoint(2),
            style: Some(CommandStyle::Block),
        })
    );
    let style = |s: &str| m(s).and_then(|m| m.style);
    assert_eq!(
        style("# meshjob-wrapper v3: command=2 flow\n"),
        Some(CommandStyle::Flow(None))
    );
    assert_eq!(
        style("# meshjob-wrapper v3: command=1 flow=[ * ]\n"),
        Some(CommandStyle::Flow(Some(FlowLayout {
            open: " ".into(),
            sep: String::new(),
            close: " ".into(),
        })))
    );
    assert_eq!(
        style("# meshjob-wrapper v3: command=3 flow=[*,*, ]\n"),
        Some(CommandStyle::Flow(Some(FlowLayout {
            open: String::new(),
            sep: ",".into(),
            close: ", ".into(),
        })))
    );
    // Version 2 wrote nothing there, and read nothing there.
    assert_eq!(style("# meshjob-wrapper v2: command=2 flow\n"), None);
    for bad in [
        "# meshjob-wrapper v2: command=\n",
        "# meshjob-wrapper v2: command=-1\n",
        "# meshjob-wrapper v2: command=+1\n",
        "# meshjob-wrapper v2: commands=1\n",
        "# meshjob-wrapper v2:command=1\n",
        "# meshjob-wrapper v2\n",
        "# meshjob-wrapper v3:command=1\n",
        "# meshjob-wrapper v3: command=1 more\n",
        "# meshjob-wrapper v3: entrypoint=1 flow\n",
        "# meshjob-wrapper v3: command=all flow\n",
        "# meshjob-wrapper v3: command=1 flow=[a]\n",
        "# meshjob-wrapper v3: command=1 flow=[*;*]\n",
        "# meshjob-wrapper v3: command=1 flow=[* *]\n",
        "# meshjob-wrapper v3: command=1 flow=[*]x\n",
        "# meshjob-wrapper v3: command=1 flow=\n",
        "# meshjob-wrapper v5: command=1\n",
    ] {
        assert_eq!(m(bad), None, "{bad}");
    }
}

#[test]
fn the_original_argv_comes_back() {
    let v = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let wrapped = |origin| {
        let mut o = default_options();
        o.origin = origin;
        vec![SHELL.to_string(), "-c".into(), render(&o), ARG0.into()]
    };
    let args = v(&["python", "-m", "job", "--fast"]);
    let back = |origin| original_argv(&wrapped(origin), &args);
    assert_eq!(
        back(ArgvOrigin::Command(2)),
        Some(Original {
            command: Some(v(&["python", "-m"])),
            args: Some(v(&["job", "--fast"])),
        })
    );
    assert_eq!(
        back(ArgvOrigin::Command(4)),
        Some(Original {
            command: Some(args.clone()),
            args: None,
        })
    );
    assert_eq!(
        back(ArgvOrigin::Entrypoint(1)),
        Some(Original {
            command: None,
            args: Some(v(&["-m", "job", "--fast"])),
        })
    );
    assert_eq!(
        back(ArgvOrigin::WholeArgv),
        Some(Original {
            command: Some(args.clone()),
            args: None,
        })
    );
    // Version 2 writes the same marker words.
    let old = v2::render(&ScriptOptions {
        origin: ArgvOrigin::Command(2),
        ..default_options()
    });
    let cmd = vec![SHELL.to_string(), "-c".into(), old, ARG0.into()];
    assert_eq!(
        original_argv(&cmd, &args),
        back(ArgvOrigin::Command(2)),
        "version 2"
    );
    // Version 1: the whole argv was `command`.
    let old = v1::render(&as_v1(&default_options()));
    let cmd = vec![SHELL.to_string(), "-c".into(), old, ARG0.into()];
    assert_eq!(
        original_argv(&cmd, &args),
        Some(Original {
            command: Some(args.clone()),
            args: None,
        })
    );
    // Fewer args than the marker counts, another shell, no marker: not ours to undo.
    assert_eq!(back(ArgvOrigin::Command(5)), None);
    assert_eq!(back(ArgvOrigin::Entrypoint(5)), None);
    let mut other = wrapped(ArgvOrigin::Command(1));
    other[0] = "/bin/bash".into();
    assert_eq!(original_argv(&other, &args), None);
    let plain = v(&["/bin/sh", "-c", "exec \"$@\"", "meshjob"]);
    assert_eq!(original_argv(&plain, &args), None);
}

#[test]
#[should_panic(expected = "control character")]
fn control_characters_in_values_panic() {
    let mut opts = default_options();
    opts.peers = Some(Peers {
        dir: "/tmp/a\nb".into(),
        me: "a".into(),
        all: vec!["a".into()],
    });
    render(&opts);
}

/// Several holders: one word each in the quit loop, the mesh proxy's first; the script is
/// recognised with any number of them, and each extra holder costs at most a line.
#[test]
fn several_holders_are_one_loop() {
    let one = render(&default_options());
    let url = |u: &str| parse_quit_url(u).unwrap();
    let mut opts = default_options();
    opts.also = vec![
        url("http://127.0.0.1:8200/agent/v1/quit"),
        url("http://127.0.0.1:3500/v1.0/shutdown"),
        url("http://127.0.0.1:20600/graceful_shutdown"),
        url("http://127.0.0.1:9091/quitquitquit"),
        url("http://127.0.0.1:20700/quit"),
    ];
    let s = render(&opts);
    assert!(
        s.contains("for q in localhost:15020/quitquitquit 127.0.0.1:8200/agent/v1/quit"),
        "{s}"
    );
    assert!(is_genuine(&s), "{s}");
    assert!(
        s.lines().count() <= one.lines().count() + 3 * opts.also.len(),
        "{s}"
    );
    assert!(s.lines().all(|l| l.len() < 100), "{s}");
    // Each endpoint once, in order, read back as written.
    let mut fewer = opts.clone();
    fewer.also.pop();
    assert_ne!(render(&fewer), s);
    assert!(is_genuine(&render(&fewer)));
    // An edited word is not genuine.
    let edited = s.replacen("127.0.0.1:8200", "127.0.0.1:8201", 1);
    assert!(
        is_genuine(&edited),
        "another port is another genuine script"
    );
    let edited = s.replacen("for q in", "for q in  ", 1);
    assert!(!is_genuine(&edited), "{edited}");
}
