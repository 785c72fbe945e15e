use super::*;
use document::{ApiVersion, Kind};

const HEAD: &str = "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\n";

fn config(spec: &str) -> MeshJobConfig {
    parse(&format!("{HEAD}spec:\n{spec}"), "test.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn error(spec: &str) -> String {
    match parse(&format!("{HEAD}spec:\n{spec}"), "test.yaml") {
        Ok(c) => panic!("should be rejected: {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn discover_walks_upward_and_takes_the_nearest() {
    let root = tempfile::tempdir().expect("tempdir");
    let deep = root.path().join("a/b/c");
    std::fs::create_dir_all(&deep).expect("mkdir");
    let ours = |dir: &Path| discover(dir).filter(|p| p.starts_with(root.path()));

    assert_eq!(ours(&deep), None, "no config anywhere below the temp root");

    let top = root.path().join(CONFIG_FILE_NAME);
    std::fs::write(&top, HEAD).expect("write");
    assert_eq!(ours(&deep), Some(top.clone()));
    assert_eq!(ours(root.path()), Some(top.clone()));

    let middle = root.path().join("a").join(CONFIG_FILE_NAME);
    std::fs::write(&middle, HEAD).expect("write");
    assert_eq!(ours(&deep), Some(middle.clone()), "the nearest wins");
    assert_eq!(ours(root.path()), Some(top), "never downward");

    // A directory with the config file's name is not a config file.
    std::fs::create_dir_all(deep.join(CONFIG_FILE_NAME)).expect("mkdir");
    assert_eq!(ours(&deep), Some(middle));
}

#[test]
fn apply_to_overrides_only_the_keys_that_are_set() {
    let mut settings = Settings {
        drain_duration: GoDuration::parse_drain("9s").unwrap(),
        force: true,
        entrypoints: BTreeMap::from([
            ("keep/".to_string(), vec!["/keep".to_string()]),
            ("alpine".to_string(), vec!["/old".to_string()]),
        ]),
        ..Settings::default()
    };
    let config = config(
        "  quitUrl: http://localhost:15099/quitquitquit\n  \
           exitOnZeroActiveConnections: false\n  \
           entrypoints: {alpine: [/bin/sh], busybox: [/bin/busybox, sh]}\n",
    );
    config.apply_to(&mut settings).expect("applies");
    assert_eq!(
        settings
            .quit_url
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("http://localhost:15099/quitquitquit")
    );
    assert!(!settings.exit_on_zero_active_connections);
    assert_eq!(
        settings.drain_duration.as_str(),
        "9s",
        "not in the config: kept"
    );
    assert!(settings.force, "not in the config: kept");
    assert!(settings.hold_application_until_proxy_starts);
    assert_eq!(
        settings.entrypoint_for("keep/x"),
        Some(&["/keep".to_string()][..])
    );
    assert_eq!(
        settings.entrypoint_for("alpine"),
        Some(&["/bin/sh".to_string()][..])
    );
    assert_eq!(settings.entrypoints.len(), 3);
}

#[test]
fn layers_defaults_then_config_then_flags() {
    let mut settings = Settings::default();
    config("  drainDuration: 20s\n  force: true\n  waitForProxy: 15\n")
        .apply_to(&mut settings)
        .expect("applies");
    // A flag, applied by the CLI after the config, wins.
    settings.drain_duration = GoDuration::parse_drain("30s").unwrap();
    assert_eq!(settings.drain_duration.as_str(), "30s");
    assert!(settings.force);
    assert_eq!(settings.wait_for_proxy_seconds, Some(15));
    assert_eq!(settings.quit_url, None);

    config("  waitForProxy: 0\n")
        .apply_to(&mut settings)
        .expect("applies");
    assert_eq!(settings.wait_for_proxy_seconds, None, "0 means no wait");
}

#[test]
fn an_empty_or_null_spec_changes_nothing() {
    for text in [
        HEAD.to_string(),
        format!("{HEAD}spec:\n"),
        format!("{HEAD}spec: {{}}\n"),
    ] {
        let mut settings = Settings::default();
        let config = parse(&text, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        config.apply_to(&mut settings).expect("applies");
        assert_eq!(settings, Settings::default(), "{text}");
    }
}

#[test]
fn a_failing_apply_changes_nothing() {
    let mut config = config("  force: true\n");
    config.spec.drain_duration = Some("soon".to_string().into());
    let mut settings = Settings::default();
    let err = config
        .apply_to(&mut settings)
        .expect_err("invalid duration");
    assert_eq!(settings, Settings::default());
    // Not from the text: no position, but still the origin.
    assert_eq!(
        (err.path.as_str(), err.line, err.column),
        ("test.yaml", 0, 0)
    );
}

#[test]
fn entrypoint_exact_match_then_longest_prefix() {
    let argv = |s: &str| vec![s.to_string()];
    let settings = Settings {
        entrypoints: BTreeMap::from([
            ("ghcr.io/".to_string(), argv("registry")),
            ("ghcr.io/acme/".to_string(), argv("org")),
            ("ghcr.io/acme/migrate".to_string(), argv("repo")),
            ("ghcr.io/acme/migrate:1.4.2".to_string(), argv("exact")),
        ]),
        ..Settings::default()
    };
    let pick = |image| settings.entrypoint_for(image).map(|a| a[0].as_str());
    assert_eq!(pick("ghcr.io/acme/migrate:1.4.2"), Some("exact"));
    assert_eq!(pick("ghcr.io/acme/migrate:2.0"), Some("repo"));
    assert_eq!(pick("ghcr.io/acme/tool:1"), Some("org"));
    assert_eq!(pick("ghcr.io/other/x"), Some("registry"));
    assert_eq!(pick("docker.io/library/alpine"), None);
    assert_eq!(
        pick("ghcr.io/acme/migrate-v2:1"),
        Some("org"),
        "a component boundary"
    );
    assert_eq!(Settings::default().entrypoint_for("alpine"), None);
}

/// The docs' own example: `docker.io/library/python` maps `image: python:3.12`. Keys and
/// images are compared as Docker normalises them.
#[test]
fn entrypoint_keys_and_images_are_normalised() {
    let argv = |s: &str| vec![s.to_string()];
    let settings = Settings {
        entrypoints: BTreeMap::from([
            ("docker.io/library/python".to_string(), argv("python3")),
            ("node".to_string(), argv("node")),
            ("index.docker.io/acme/tool".to_string(), argv("tool")),
        ]),
        ..Settings::default()
    };
    let pick = |image| settings.entrypoint_for(image).map(|a| a[0].as_str());
    assert_eq!(pick("python:3.12"), Some("python3"));
    assert_eq!(pick("python"), Some("python3"));
    assert_eq!(pick("library/python:3.12-slim"), Some("python3"));
    assert_eq!(pick("docker.io/library/node:22"), Some("node"));
    assert_eq!(pick("index.docker.io/library/node"), Some("node"));
    assert_eq!(pick("acme/tool:1"), Some("tool"));
    assert_eq!(pick("docker.io/acme/tool"), Some("tool"));
    assert_eq!(pick("registry.example/python:3.12"), None);
    assert_eq!(pick("pythonista"), None);
}

#[test]
fn value_errors_point_at_the_value() {
    let e = error("  force: false\n  drainDuration: 5 s\n");
    assert!(
        e.starts_with("test.yaml:5:18: error: invalid `drainDuration`"),
        "{e}"
    );
    let e = error("  quitUrl: ftp://localhost/quit\n");
    assert!(
        e.starts_with("test.yaml:4:12: error: invalid `quitUrl`"),
        "{e}"
    );
    let e = error("  entrypoints:\n    alpine: ['']\n");
    assert!(
        e.starts_with("test.yaml:5:13: error: invalid `entrypoints`"),
        "{e}"
    );
    let e = error("  entrypoints:\n    '': [/bin/sh]\n");
    assert!(e.contains("must not be empty"), "{e}");
}

#[test]
fn quit_urls() {
    for good in [
        "http://localhost:15020/quitquitquit",
        "http://127.0.0.1:15020/quitquitquit",
        "http://localhost/quitquitquit",
        "http://my-host.local:1/a/b_c~d%20e",
    ] {
        assert_eq!(quit_url::parse(good).map(drop), Ok(()), "{good}");
    }
    for bad in [
        "",
        "localhost:15020/quitquitquit",
        "https://localhost:15020/quitquitquit",
        "http://localhost:15020",
        "http://localhost:15020/",
        "http://:15020/quitquitquit",
        "http://-host/quitquitquit",
        "http://localhost:0/quitquitquit",
        "http://localhost:65536/quitquitquit",
        "http://localhost:/quitquitquit",
        "http://localhost:15x/quitquitquit",
        "http://user@localhost/quitquitquit",
        "http://[]/quitquitquit",
        "http://[::1]:15020/quitquitquit",
        "http://localhost/a%zz",
        "http://localhost/quit quit",
        "http://localhost/quit?now=1",
        "http://localhost/$(reboot)",
        "http://localhost/quit'",
    ] {
        assert!(quit_url::parse(bad).is_err(), "{bad:?} should be rejected");
    }
}

#[test]
fn render_round_trips_awkward_values() {
    let settings = Settings {
        quit_url: Some(quit_url::parse("http://127.0.0.1:15021/a%20b:c@d").unwrap()),
        mesh: MeshId::Linkerd,
        drain_duration: GoDuration::parse_drain("0").unwrap(),
        exit_on_zero_active_connections: false,
        hold_application_until_proxy_starts: false,
        entrypoints: BTreeMap::from([(
            "example.com:5000/x".to_string(),
            [
                "/bin/sh", "-c", "", "10", "true", "null", "a: b", "# c", "- d", "x\ny", "'\"",
                "\t",
            ]
            .map(String::from)
            .to_vec(),
        )]),
        wait_for_proxy_seconds: Some(4_294_967_295),
        force: true,
        exclude: ["legacy", "*.gen.yaml", "a/[!b]?/**"]
            .map(String::from)
            .to_vec(),
        fail_on: FailOn::Warning,
        rules: {
            let mut rules = RuleSet::default();
            let ignore = select::parse_all(&["MJ7".into(), "MJ120".into()]).unwrap();
            rules.apply(None, &ignore);
            rules
        },
        linkerd_version: Some(Release::Edge(crate::version::Edge::new(25, 10, 2))),
        istio_version: Some(Version::new(1, 30)),
        kubernetes_version: Some(Version::new(1, 9)),
        holder_versions: BTreeMap::from([
            ("daprVersion", crate::version::Semver::new(1, 18, 3)),
            ("consulK8sVersion", crate::version::Semver::new(1, 8, 2)),
        ]),
        vault_pre_populate_only: true,
        strategy: StrategyChoice::None,
        sidecars: vec!["true".into(), "a/b:1".into()],
        kinds: crate::kinds::Kinds::default(),
        given: Given::default(),
        versions_from: vec!["../platform".into(), "nodes.yaml".into()],
        project_context: false,
    };
    let text = render_effective(&settings);
    let mut back = Settings::default();
    parse(&text, "rendered.yaml")
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .apply_to(&mut back)
        .expect("applies");
    // The rendered document is where the versions now come from.
    assert_eq!(
        back.given.istio,
        Some(VersionOrigin::Config {
            file: "rendered.yaml".into(),
            line: text
                .lines()
                .position(|l| l.contains("istioVersion"))
                .unwrap()
                + 1,
            key: "istioVersion"
        })
    );
    assert_eq!(back, settings, "{text}");
}

#[test]
fn document_constants_match_the_types() {
    let api = serde_json::to_value(ApiVersion::V1alpha1).expect("serialize");
    let kind = serde_json::to_value(Kind::MeshJobConfig).expect("serialize");
    assert_eq!(api, API_VERSION);
    assert_eq!(kind, KIND);
    let keys = spec_keys();
    assert!(keys.iter().any(|k| k == "drainDuration"), "{keys:?}");
    assert!(schema_json().ends_with("}\n"));
}

#[test]
fn load_reports_unreadable_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.yaml");
    let e = load(&missing).expect_err("missing file");
    assert_eq!(e.line, 0);
    assert!(
        e.to_string()
            .contains(": error: cannot read the config file"),
        "{e}"
    );
}
