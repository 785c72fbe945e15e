//! The decision table, case by case.

use super::*;
use crate::config::{MeshId, Version};
use crate::locate::locate;
use crate::yaml::tree::parse_stream;

/// The strategy of the first pod of the document, or None when it is skipped.
fn strategy(src: &str, settings: &Settings) -> Option<Strategy> {
    let docs = parse_stream(src).unwrap();
    let pods = locate(&docs[0].root, crate::kinds::Kinds::builtin()).pods;
    match decide(&pods[0], settings, &RunContext::default(), &mut Vec::new()) {
        Decision::Fix { strategy, .. } => Some(strategy),
        Decision::Skip(_) => None,
    }
}

fn job(meta: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata: {meta}\n    spec: {spec}\n"
    )
}

fn with(istio: Option<(u32, u32)>, kube: Option<(u32, u32)>, s: StrategyChoice) -> Settings {
    Settings {
        istio_version: istio.map(|(a, b)| Version::new(a, b)),
        kubernetes_version: kube.map(|(a, b)| Version::new(a, b)),
        strategy: s,
        ..Settings::default()
    }
}

/// The meshes of the pods of the document that get the wrapper, and the reasons of those
/// that do not, with the Namespace documents of the same text.
fn decide_all(src: &str, default_mesh: MeshId) -> (Vec<MeshId>, Vec<Why>) {
    let docs = parse_stream(src).unwrap();
    let mut namespaces = Namespaces::default();
    for d in &docs {
        namespaces.add(&d.root);
    }
    let ctx = RunContext {
        namespaces,
        ..RunContext::default()
    };
    let settings = Settings {
        mesh: default_mesh,
        ..Settings::default()
    };
    let mut fixed = Vec::new();
    let mut msgs = Vec::new();
    for d in &docs {
        for pod in &locate(&d.root, crate::kinds::Kinds::builtin()).pods {
            match decide(pod, &settings, &ctx, &mut Vec::new()) {
                Decision::Fix {
                    mesh,
                    strategy: Strategy::Wrapper,
                    ..
                } => fixed.push(mesh.id),
                Decision::Fix { why, .. } | Decision::Skip(why) => msgs.push(why),
            }
        }
    }
    (fixed, msgs)
}

fn job_in(ns: &str, meta: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: {ns}}}\nspec:\n  template:\n    metadata: {meta}\n    spec: {spec}\n"
    )
}

#[test]
fn mesh_of_each_pod() {
    use MeshId::{Istio, Linkerd};
    let on = "{annotations: {linkerd.io/inject: enabled}}";
    assert_eq!(decide_all(&job_in("a", on, "{}"), Istio).0, [Linkerd]);
    let ingress = "{annotations: {linkerd.io/inject: ingress}}";
    assert_eq!(decide_all(&job_in("a", ingress, "{}"), Istio).0, [Linkerd]);
    // Linkerd reads annotations only, and values exactly.
    let label = "{labels: {linkerd.io/inject: enabled}}";
    assert_eq!(decide_all(&job_in("a", label, "{}"), Istio).0, [Istio]);
    let upper = "{annotations: {linkerd.io/inject: Enabled}}";
    assert_eq!(decide_all(&job_in("a", upper, "{}"), Istio).0, [Istio]);
    // No marker: the setting.
    assert_eq!(decide_all(&job_in("a", "{}", "{}"), Linkerd).0, [Linkerd]);
    let rev = "{labels: {istio.io/rev: canary}}";
    assert_eq!(decide_all(&job_in("a", rev, "{}"), Linkerd).0, [Istio]);
    let proxy = "{containers: [{name: linkerd-proxy}, {name: t, command: [x]}]}";
    assert_eq!(decide_all(&job_in("a", "{}", proxy), Istio).0, [Linkerd]);
    // A Namespace of the run, matched by name.
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: batch, annotations: {linkerd.io/inject: enabled}}\n---\n";
    let both = format!(
        "{ns}{}---\n{}",
        job_in("batch", "{}", "{}"),
        job_in("other", "{}", "{}")
    );
    assert_eq!(decide_all(&both, Istio).0, [Linkerd, Istio]);
    // The pod's own opt-out wins over its Namespace.
    let off = "{annotations: {linkerd.io/inject: disabled}}";
    let (fixed, msgs) = decide_all(&format!("{ns}{}", job_in("batch", off, "{}")), Istio);
    assert!(fixed.is_empty());
    assert!(
        matches!(&msgs[..], [Why::OptedOut(s)]
            if s.mesh == Linkerd && s.what == "annotation linkerd.io/inject: \"disabled\""),
        "{msgs:?}"
    );
    // An opt-out of Linkerd does not make the pod an Istio pod.
    assert_eq!(decide_all(&job_in("a", off, "{}"), Istio).0, []);
    // Opting out of Istio in a Linkerd namespace leaves a Linkerd pod.
    let istio_off = "{labels: {sidecar.istio.io/inject: \"false\"}}";
    let (fixed, _) = decide_all(&format!("{ns}{}", job_in("batch", istio_off, "{}")), Istio);
    assert_eq!(fixed, [Linkerd]);
}

#[test]
fn two_meshes_are_an_error() {
    let meta =
        "{labels: {sidecar.istio.io/inject: \"true\"}, annotations: {linkerd.io/inject: enabled}}";
    let (fixed, msgs) = decide_all(&job_in("a", meta, "{}"), MeshId::Istio);
    assert!(fixed.is_empty());
    assert!(
        matches!(&msgs[..], [Why::MeshConflict(a, b)]
            if a.what == "label sidecar.istio.io/inject: \"true\""
                && b.what == "annotation linkerd.io/inject: \"enabled\""),
        "{msgs:?}"
    );
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: batch, labels: {istio-injection: enabled}}\n---\n";
    let pod = "{annotations: {linkerd.io/inject: enabled}}";
    let (fixed, msgs) = decide_all(
        &format!("{ns}{}", job_in("batch", pod, "{}")),
        MeshId::Istio,
    );
    assert!(fixed.is_empty());
    assert!(
        matches!(&msgs[..], [Why::MeshConflict(a, _)]
            if a.what == "label istio-injection: \"enabled\" on Namespace/batch"),
        "{msgs:?}"
    );
}

#[test]
fn linkerd_native_sidecar_annotations() {
    let t = |anns: &str| {
        decide_all(
            &job_in(
                "a",
                &format!("{{annotations: {{linkerd.io/inject: enabled, {anns}}}}}"),
                "{}",
            ),
            MeshId::Istio,
        )
    };
    assert_eq!(
        t("config.alpha.linkerd.io/proxy-enable-native-sidecar: \"true\"").0,
        []
    );
    assert_eq!(
        t("config.beta.linkerd.io/proxy-enable-native-sidecar: \"1\"").0,
        []
    );
    assert_eq!(
        t("config.linkerd.io/proxy-enable-native-sidecar: \"True\"").0,
        []
    );
    // GA wins over alpha.
    let (fixed, _) = t(
        "config.linkerd.io/proxy-enable-native-sidecar: \"false\", config.alpha.linkerd.io/proxy-enable-native-sidecar: \"true\"",
    );
    assert_eq!(fixed, [MeshId::Linkerd]);
}

#[test]
fn opt_outs() {
    let d = Settings::default();
    let t = |meta: &str, spec: &str| strategy(&job(meta, spec), &d);
    assert_eq!(
        t("{labels: {sidecar.istio.io/inject: \"false\"}}", "{}"),
        None
    );
    assert_eq!(
        t("{annotations: {sidecar.istio.io/inject: \"false\"}}", "{}"),
        None
    );
    // The label wins.
    assert_eq!(
        t(
            "{labels: {sidecar.istio.io/inject: \"true\"}, annotations: {sidecar.istio.io/inject: \"false\"}}",
            "{}"
        ),
        Some(Strategy::Wrapper)
    );
    assert_eq!(t("{}", "{hostNetwork: true}"), None);
    assert_eq!(
        t(
            "{annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}",
            "{}"
        ),
        Some(Strategy::Remove { keep_native: true })
    );
}

#[test]
fn versions_decide() {
    use StrategyChoice::{Auto, Native, Wrapper};
    let plain = job("{}", "{containers: [{name: a, command: [x]}]}");
    let cases = [
        (Some((1, 24)), Some((1, 29)), Auto, Some(Strategy::Native)),
        (Some((1, 23)), Some((1, 33)), Auto, Some(Strategy::Wrapper)),
        (Some((1, 30)), Some((1, 28)), Auto, Some(Strategy::Wrapper)),
        (Some((1, 30)), None, Auto, Some(Strategy::Wrapper)),
        (None, None, Auto, Some(Strategy::Wrapper)),
        (
            Some((1, 27)),
            Some((1, 33)),
            Wrapper,
            Some(Strategy::Wrapper),
        ),
        (Some((1, 22)), Some((1, 33)), Native, None),
        (None, None, Native, Some(Strategy::Native)),
        (
            None,
            None,
            StrategyChoice::None,
            Some(Strategy::Remove { keep_native: false }),
        ),
    ];
    for (i, k, s, want) in cases {
        assert_eq!(strategy(&plain, &with(i, k, s)), want, "{i:?} {k:?} {s:?}");
    }
    let ambient = job("{labels: {istio.io/dataplane-mode: ambient}}", "{}");
    assert_eq!(
        strategy(&ambient, &with(Some((1, 24)), Some((1, 29)), Auto)),
        Some(Strategy::Remove { keep_native: false })
    );
    let both = job(
        "{labels: {istio.io/dataplane-mode: ambient, sidecar.istio.io/inject: \"true\"}}",
        "{}",
    );
    assert_eq!(
        strategy(&both, &with(Some((1, 24)), Some((1, 29)), Auto)),
        Some(Strategy::Native)
    );
    let off = job(
        "{annotations: {sidecar.istio.io/nativeSidecar: \"false\"}}",
        "{}",
    );
    assert_eq!(
        strategy(&off, &with(Some((1, 27)), Some((1, 33)), Auto)),
        Some(Strategy::Wrapper)
    );
    // The annotation does nothing on Istio 1.23: the wrapper, and the annotation goes.
    let on = job(
        "{annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}",
        "{}",
    );
    assert_eq!(
        strategy(&on, &with(Some((1, 23)), Some((1, 29)), Auto)),
        Some(Strategy::Wrapper)
    );
}

/// The reason `auto` gives the first pod of `src`, with the versions its other documents say.
fn why_with_run(src: &str, settings: &Settings) -> Why {
    let ctx = RunContext::of_stream(src, &crate::yaml::split::pieces(src), None);
    let docs = parse_stream(src).unwrap();
    let pod = docs
        .iter()
        .flat_map(|d| locate(&d.root, crate::kinds::Kinds::builtin()).pods)
        .next()
        .expect("a pod");
    match decide(&pod, settings, &ctx, &mut Vec::new()) {
        Decision::Fix { why, .. } | Decision::Skip(why) => why,
    }
}

#[test]
fn a_mesh_that_makes_every_proxy_native_gets_native_without_kubernetes() {
    let operator = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  tag: 1.29.1\n  components:\n    pilot:\n      k8s:\n        env:\n        - {name: ENABLE_NATIVE_SIDECARS, value: \"true\"}\n---\n";
    let src = format!(
        "{operator}{}",
        job("{}", "{containers: [{name: a, command: [x]}]}")
    );
    assert!(matches!(
        why_with_run(&src, &Settings::default()),
        Why::MeshNative(_)
    ));
    // Istio's default `auto` needs every kubelet at 1.33: one older node keeps it off, and the
    // pod annotation does the job.
    let auto = src.replace("\"true\"", "auto");
    let old = with(None, Some((1, 32)), StrategyChoice::Auto);
    assert!(matches!(why_with_run(&auto, &old), Why::Native(_)));
    let new = with(None, Some((1, 33)), StrategyChoice::Auto);
    assert!(matches!(why_with_run(&auto, &new), Why::MeshNative(_)));
}

#[test]
fn a_native_key_the_version_does_not_read_does_not_make_the_pod_native() {
    let ga = job(
        "{annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-enable-native-sidecar: \"true\"}}",
        "{containers: [{name: a, command: [x]}]}",
    );
    let settings = |v: &str| Settings {
        linkerd_version: Some(crate::config::Release::parse(v, true).unwrap()),
        kubernetes_version: Some(Version::new(1, 30)),
        ..Settings::default()
    };
    assert!(matches!(
        why_with_run(&ga, &settings("2.19")),
        Why::Native(_)
    ));
    assert!(matches!(
        why_with_run(&ga, &settings("edge-26.5.2")),
        Why::PodIsNative { .. }
    ));
}

/// The decision on the first pod of `src`.
fn decision(src: &str, settings: &Settings) -> Decision {
    let docs = parse_stream(src).unwrap();
    let pods = locate(&docs[0].root, crate::kinds::Kinds::builtin()).pods;
    decide(&pods[0], settings, &RunContext::default(), &mut Vec::new())
}

#[test]
fn kinds_that_allow_only_native_sidecars() {
    let argo = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  templates:\n  - name: a\n    container: {image: busybox, command: [echo]}\n";
    let unknown = with(None, None, StrategyChoice::Auto);
    assert!(matches!(
        decision(argo, &unknown),
        Decision::Skip(Why::NativeOnlyUnknown { .. })
    ));
    let wrapper = with(None, None, StrategyChoice::Wrapper);
    assert!(matches!(
        decision(argo, &wrapper),
        Decision::Skip(Why::WrapperNotAllowed { .. })
    ));
    assert_eq!(
        strategy(
            argo,
            &with(Some((1, 28)), Some((1, 33)), StrategyChoice::Auto)
        ),
        Some(Strategy::Native)
    );
    let old = with(Some((1, 22)), Some((1, 33)), StrategyChoice::Auto);
    assert!(matches!(
        decision(argo, &old),
        Decision::Fix {
            strategy: Strategy::Fallback(Fallback::KillCommand { .. }),
            why: Why::Fallback {
                cause: Blocked::TooOld(_),
                ..
            },
            ..
        }
    ));
    // The pod turns native sidecars off: the fallback too.
    let off = argo.replace(
        "spec:\n",
        "spec:\n  podMetadata: {annotations: {sidecar.istio.io/nativeSidecar: \"false\"}}\n",
    );
    let known = with(Some((1, 28)), Some((1, 33)), StrategyChoice::Auto);
    assert!(matches!(
        decision(&off, &known),
        Decision::Fix {
            why: Why::Fallback {
                cause: Blocked::TurnedOff { .. },
                ..
            },
            ..
        }
    ));
    // A kind without a fallback gets nothing.
    let spark = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nspec:\n  driver: {cores: 1}\n  executor: {cores: 1}\n";
    assert!(matches!(
        decision(spark, &old),
        Decision::Skip(Why::NoFix {
            cause: Blocked::TooOld(_),
            ..
        })
    ));
    // Every template that runs pods opts out (the steps template runs none).
    let kfp = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nspec:\n  templates:\n  - name: main\n    steps: []\n  - name: a\n    metadata: {annotations: {sidecar.istio.io/inject: \"false\"}}\n    container: {image: busybox}\n";
    assert!(matches!(
        decision(kfp, &known),
        Decision::Skip(Why::EveryVariantOptsOut { count: 1, .. })
    ));
}

#[test]
fn a_rayjob_submitter_takes_the_wrapper_only_with_its_own_command() {
    let ray = |command: &str| {
        format!(
            "apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  submitterPodTemplate:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {{name: s, image: ray{command}}}\n"
        )
    };
    let unknown = with(None, None, StrategyChoice::Auto);
    assert_eq!(
        strategy(&ray(", command: [ray, job, submit]"), &unknown),
        Some(Strategy::Wrapper)
    );
    assert!(matches!(
        decision(&ray(""), &unknown),
        Decision::Skip(Why::NativeOnlyUnknown { .. })
    ));
    // Other modes have no submitter pod.
    let http = ray("").replace(
        "spec:\n  submitter",
        "spec:\n  submissionMode: HTTPMode\n  submitter",
    );
    let docs = parse_stream(&http).unwrap();
    assert!(
        locate(&docs[0].root, crate::kinds::Kinds::builtin())
            .pods
            .is_empty()
    );
}

#[test]
fn only_batch_pods_are_targets() {
    let pod = |policy: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {policy}containers: [{{name: c, image: x, command: [x]}}]\n"
        )
    };
    let count = |src: &str| {
        let docs = parse_stream(src).unwrap();
        locate(&docs[0].root, crate::kinds::Kinds::builtin())
            .pods
            .len()
    };
    assert_eq!(count(&pod("")), 0);
    assert_eq!(count(&pod("restartPolicy: Always\n  ")), 0);
    assert_eq!(count(&pod("restartPolicy: Never\n  ")), 1);
    assert_eq!(count(&pod("restartPolicy: OnFailure\n  ")), 1);
    // A Kubeflow replica's own policy wins over its template's, and ExitCode means Never.
    let tf = |beside: &str| {
        format!(
            "apiVersion: kubeflow.org/v1\nkind: TFJob\nspec:\n  tfReplicaSpecs:\n    PS:\n      {beside}template: {{spec: {{restartPolicy: Never}}}}\n"
        )
    };
    assert_eq!(count(&tf("restartPolicy: Always\n      ")), 0);
    assert_eq!(count(&tf("restartPolicy: ExitCode\n      ")), 1);
}

#[test]
fn a_pin_on_the_pod_template_wins_over_the_objects_and_the_runs() {
    let pinned = |object: &str, template: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, annotations: {object}}}\n\
             spec:\n  template:\n    metadata: {{annotations: {template}}}\n    spec: \
             {{containers: [{{name: a, command: [x]}}]}}\n"
        )
    };
    let new = with(Some((1, 24)), Some((1, 30)), StrategyChoice::Wrapper);
    let both = pinned(
        "{meshjob.dev/strategy: wrapper}",
        "{meshjob.dev/strategy: native}",
    );
    assert_eq!(strategy(&both, &new), Some(Strategy::Native));
    let object = pinned("{meshjob.dev/strategy: native}", "{}");
    assert_eq!(strategy(&object, &new), Some(Strategy::Native));
    // `auto` is a pin too: the versions decide, whatever the run's strategy.
    let auto = pinned("{}", "{meshjob.dev/strategy: auto}");
    assert_eq!(strategy(&auto, &new), Some(Strategy::Native));
    let none = pinned("{}", "{meshjob.dev/strategy: none}");
    assert_eq!(
        strategy(&none, &new),
        Some(Strategy::Remove { keep_native: false })
    );
    // Ignored, or a value that is no strategy: left alone.
    assert_eq!(
        strategy(&pinned("{meshjob.dev/ignore: x}", "{}"), &new),
        None
    );
    let bad = pinned("{}", "{meshjob.dev/strategy: Native}");
    assert!(matches!(
        decision(&bad, &new),
        Decision::Skip(Why::PinInvalid { .. })
    ));
}
