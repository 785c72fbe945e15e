//! What a text says about versions, and how it is put together.

use super::*;
use crate::config::{MeshId, Version};
use crate::decide::RunContext;
use crate::mesh::found::Value;

fn read(text: &str) -> Versions {
    RunContext::of_stream(text, &crate::yaml::split::pieces(text), None).versions
}

fn istio(v: &Versions, settings: &Settings) -> Support {
    v.support(MeshId::Istio.mesh(), settings)
}

const OPERATOR: &str =
    "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  tag: 1.29.1\n";
const HELM_RELEASE: &str = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: istiod}\nspec:\n  chart:\n    spec: {chart: istiod, version: 1.27.1}\n";

#[test]
fn the_oldest_read_decides_and_each_place_is_kept() {
    let v = read(&format!("{OPERATOR}---\n{HELM_RELEASE}"));
    let s = istio(&v, &Settings::default());
    let found = s.mesh_version.expect("read");
    assert_eq!(found.value, Release::Stable(Version::new(1, 27)));
    let place = found.origin.place().expect("a place");
    assert_eq!(
        (place.line, place.field.as_str()),
        (11, "spec.chart.spec.version")
    );
    let c = v.conflicts(&Settings::default());
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].what, What::Injector(MeshId::Istio));
    assert_eq!(c[0].finding(0).rule, Rule::VersionsDisagree);
}

#[test]
fn a_flag_beats_the_config_which_beats_what_was_read() {
    let v = read(OPERATOR);
    let mut settings = Settings::default();
    let config = crate::config::parse(
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n  istioVersion: \"1.24\"\n",
        "c.yaml",
    )
    .expect("config");
    config.apply_to(&mut settings).expect("applies");
    let s = istio(&v, &settings);
    assert_eq!(s.release(), Some(Release::Stable(Version::new(1, 24))));
    assert!(matches!(
        s.mesh_version.unwrap().origin,
        VersionOrigin::Config { line: 4, .. }
    ));
    let flags = crate::config::Flags {
        istio_version: Some("1.26".into()),
        ..Default::default()
    };
    let settings = (crate::config::Resolver::new(&flags).expect("flags"))
        .settings(Some(&config))
        .expect("applies");
    let s = istio(&v, &settings);
    assert_eq!(s.release(), Some(Release::Stable(Version::new(1, 26))));
    assert_eq!(
        s.mesh_version.unwrap().origin,
        VersionOrigin::Flag("--istio-version")
    );
}

#[test]
fn a_control_plane_bounds_its_kubelets_and_a_kubelet_wins_over_it() {
    let kcp = "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\nmetadata: {name: cp}\nspec:\n  version: v1.32.0\n";
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  nodeInfo:\n    kubeletVersion: v1.30.5\n";
    let s = istio(&read(kcp), &Settings::default());
    assert_eq!(s.kubelets(), Some(Kubelets::AtLeast(Version::new(1, 29))));
    let s = istio(&read(&format!("{kcp}---\n{node}")), &Settings::default());
    assert_eq!(s.kubelets(), Some(Kubelets::Oldest(Version::new(1, 30))));
}

#[test]
fn placeholders_are_read_as_unknown() {
    for text in [
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata: {name: md}\nspec:\n  template:\n    spec:\n      version: \"${KUBERNETES_VERSION}\"\n",
        "apiVersion: sailoperator.io/v1\nkind: Istio\nmetadata: {name: default}\nspec:\n  version: master\n",
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  tag: latest\n",
        "global:\n  tag: \"{{ .Values.istioTag }}\"\n  istioNamespace: istio-system\n",
        "linkerdVersion: linkerdVersionValue\n",
    ] {
        let v = read(text);
        assert!(!v.is_empty(), "nothing read in {text}");
        assert!(v.found().iter().all(|f| f.value.is_none()), "{text}: {v:?}");
    }
}

#[test]
fn injector_and_proxy_are_kept_apart() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio-sidecar-injector}\ndata:\n  values: |-\n    {\"global\": {\"tag\": \"1.26.1\"}}\n";
    let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: istiod}\nspec:\n  template:\n    spec:\n      containers:\n      - name: discovery\n        image: gcr.io/istio-release/pilot:1.29.1\n";
    let v = read(&format!("{cm}---\n{dep}"));
    let proxy = v.proxy(MeshId::Istio.mesh()).expect("proxy");
    assert_eq!(proxy.value, Release::Stable(Version::new(1, 26)));
    // The place inside the embedded values is mapped back onto the file.
    assert_eq!(proxy.origin.place().map(|p| p.line), Some(6));
    let s = istio(&v, &Settings::default());
    assert_eq!(s.release(), Some(Release::Stable(Version::new(1, 29))));
    let c = v.conflicts(&Settings::default());
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(c[0].drift);
    assert_eq!(c[0].finding(0).rule, Rule::ProxyDrift);
}

#[test]
fn compatibility_profiles_turn_native_off_unless_pilot_env_says_otherwise() {
    let native = |text: &str| {
        read(text)
            .found()
            .iter()
            .find(|f| f.what == What::Native(MeshId::Istio))
            .and_then(|f| f.value)
    };
    let off = Some(Value::Native(NativeMode::Off));
    let on = Some(Value::Native(NativeMode::On));
    assert_eq!(
        native("compatibilityVersion: \"1.26\"\nglobal: {istioNamespace: x}\n"),
        off
    );
    assert_eq!(
        native(
            "compatibilityVersion: \"1.26\"\nenv: {ENABLE_NATIVE_SIDECARS: \"true\"}\npilot: {}\n"
        ),
        off
    );
    assert_eq!(
        native(
            "compatibilityVersion: \"1.26\"\npilot: {env: {ENABLE_NATIVE_SIDECARS: \"true\"}}\n"
        ),
        on
    );
    assert_eq!(
        native("compatibilityVersion: \"1.27\"\npilot: {enabled: true}\n"),
        None
    );
}

#[test]
fn linkerd_edge_charts_and_values() {
    let hr = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: l5d}\nspec:\n  chart:\n    spec: {chart: linkerd-control-plane, version: 2026.5.2}\n";
    let s = read(hr).support(MeshId::Linkerd.mesh(), &Settings::default());
    assert_eq!(
        s.release(),
        Some(Release::Edge(crate::version::Edge::new(26, 5, 2)))
    );
    assert_eq!(s.global_native(), Some(true));
    let values = "linkerdVersion: edge-25.10.2\nproxy:\n  nativeSidecar: false\n";
    let s = read(values).support(MeshId::Linkerd.mesh(), &Settings::default());
    assert_eq!(s.global_native(), Some(false));
    assert!(s.reads("config.beta.linkerd.io/proxy-enable-native-sidecar"));
    assert!(!s.reads("config.linkerd.io/proxy-enable-native-sidecar"));
}

#[test]
fn what_the_quick_scanner_shows_decides_what_is_parsed() {
    let head = |t: &'static str| crate::yaml::quick::head(t);
    let yes = [
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: istiod-1-24-2\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio-sidecar-injector\n",
        "global: {tag: 1.29.1}\n",
    ];
    for t in yes {
        assert!(may_hold(head(t).as_ref(), t), "{t}");
    }
    let no = [
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n",
    ];
    for t in no {
        assert!(!may_hold(head(t).as_ref(), t), "{t}");
    }
}

#[test]
fn every_needle_is_found_wherever_it_stands() {
    let plain = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n".to_vec();
    assert!(!batch_may_hold(&plain));
    for needle in NEEDLES {
        // At the start, in the middle and at the very end of a batch.
        for at in [0, plain.len() / 2, plain.len()] {
            let mut bytes = plain.clone();
            bytes.splice(at..at, needle.iter().copied());
            assert!(
                batch_may_hold(&bytes),
                "{}",
                String::from_utf8_lossy(needle)
            );
        }
        // Cut short by one byte, a needle is not found.
        let mut bytes = plain.clone();
        bytes.extend_from_slice(&needle[..needle.len() - 1]);
        let one_each = NEEDLES
            .iter()
            .any(|n| memchr::memmem::find(&bytes, n).is_some());
        assert_eq!(batch_may_hold(&bytes), one_each);
    }
}

#[test]
fn the_search_on_every_core_finds_what_one_finds() {
    // A large input of ordinary text, each needle placed across each part boundary and at
    // both ends: the threads' parts overlap enough to see it whole.
    let line = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";
    let plain: Vec<u8> = line.iter().copied().cycle().take(5 << 20).collect();
    assert!(!may_hold_anywhere(&plain));
    for needle in NEEDLES {
        for at in [
            0,
            (1 << 20) - 3,
            2 << 20,
            (3 << 20) - 1,
            plain.len() - needle.len(),
        ] {
            let mut bytes = plain.clone();
            bytes[at..at + needle.len()].copy_from_slice(needle);
            assert!(
                may_hold_anywhere(&bytes),
                "{} at {at}",
                String::from_utf8_lossy(needle)
            );
        }
    }
}

#[test]
fn the_search_block_by_block_finds_what_one_search_finds() {
    // Each needle placed across each block boundary of the search (64 KiB blocks) and at
    // both ends, in inputs of several sizes.
    let line = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";
    for len in [10, 65_536, 65_555, 200_000] {
        let plain: Vec<u8> = line.iter().copied().cycle().take(len).collect();
        assert!(!batch_may_hold(&plain));
        for needle in NEEDLES {
            let ends = [0, len.saturating_sub(needle.len())];
            let bounds = (1..4).flat_map(|k| (1..needle.len()).map(move |d| (k << 16) - d));
            for at in ends.into_iter().chain(bounds) {
                if at + needle.len() > len {
                    continue;
                }
                let mut bytes = plain.clone();
                bytes[at..at + needle.len()].copy_from_slice(needle);
                assert!(
                    batch_may_hold(&bytes),
                    "{} at {at}",
                    String::from_utf8_lossy(needle)
                );
            }
        }
    }
}

#[test]
fn the_mesh_wide_status_port_is_read_wherever_mesh_config_is_given() {
    let port = |text: &str| {
        let v = read(text);
        let s = istio(&v, &Settings::default());
        s.quit_port.map(|p| {
            let field = p
                .origin
                .place()
                .map(|pl| pl.field.clone())
                .unwrap_or_default();
            (p.value, field)
        })
    };
    // Helm values of the istiod chart, a HelmRelease's values, an Argo CD parameter.
    assert_eq!(
        port("meshConfig:\n  defaultConfig:\n    statusPort: 15040\n"),
        Some((15040, "meshConfig.defaultConfig.statusPort".into()))
    );
    let release = format!(
        "{HELM_RELEASE}  values:\n    meshConfig: {{defaultConfig: {{statusPort: \"15041\"}}}}\n"
    );
    assert_eq!(port(&release).map(|p| p.0), Some(15041));
    // The mesh ConfigMap of a revision, its MeshConfig as text.
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio-canary}\ndata:\n  mesh: |\n    defaultConfig:\n      statusPort: 15042\n";
    assert_eq!(
        port(cm),
        Some((15042, "data.mesh: defaultConfig.statusPort".into()))
    );
    // Another ConfigMap's `mesh` text, and the chart's global.proxy.statusPort (which only
    // fills the pod's excludeInboundPorts), say nothing about where pilot-agent listens.
    assert_eq!(port(&cm.replace("istio-canary", "other")), None);
    assert_eq!(
        port("global:\n  proxy:\n    statusPort: 15043\n  istioNamespace: x\n"),
        None
    );
    // A template is no port.
    assert_eq!(
        port("meshConfig:\n  defaultConfig:\n    statusPort: \"{{ .Values.port }}\"\n"),
        None
    );
    // Two that disagree: the smaller is taken, and a conflict says so.
    let v = read(&format!(
        "{cm}---\nmeshConfig:\n  defaultConfig:\n    statusPort: 15040\n"
    ));
    assert_eq!(
        istio(&v, &Settings::default()).quit_port.map(|p| p.value),
        Some(15040)
    );
    let c = v.conflicts(&Settings::default());
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].what, What::QuitPort(MeshId::Istio));
    assert!(c[0].finding(0).message.contains("--quit-url"));
}
