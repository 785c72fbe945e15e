//! What a manifest says about the versions a run targets: the injecting mesh, its proxy, the
//! oldest kubelet, and the mesh's global native-sidecar setting. Each mesh reads its own
//! documents (`istio::versions`, `linkerd::versions`); the run's reader of manifest versions,
//! a layer above, reads Kubernetes' and puts them together. This module holds what they
//! share: [`Found`] and the [`Finder`] that records one with where it was read.

use crate::config::MeshId;
use crate::version::{ManifestPlace, Release, Version};
use crate::yaml::tree::Node;
use std::sync::Arc;

/// What a version read from a manifest is the version of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum What {
    /// The mesh's injector (istiod, Linkerd's control plane), which decides which
    /// native-sidecar annotation a pod needs.
    Injector(MeshId),
    /// The proxy it injects (Istio's `proxyv2`, `linkerd-proxy`), which decides how the
    /// proxy quits.
    Proxy(MeshId),
    /// One kubelet (a node, or a pool of them).
    Kubelet,
    /// A control plane, which bounds its kubelets from below.
    ControlPlane,
    /// The mesh's global native-sidecar setting.
    Native(MeshId),
    /// The port the mesh's proxies serve their quit endpoint on, mesh-wide (Istio's
    /// `defaultConfig.statusPort`): a pod without its own port setting is stopped there.
    QuitPort(MeshId),
}

/// A global native-sidecar setting as a manifest writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NativeMode {
    On,
    Off,
    /// Istio's `auto`: on when every kubelet is new enough.
    Auto,
}

impl NativeMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NativeMode::On => "on",
            NativeMode::Off => "off",
            NativeMode::Auto => "auto",
        }
    }
}

/// A value read from a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Release(Release),
    Kubernetes(Version),
    Native(NativeMode),
    Port(u16),
}

/// One thing a manifest says. `value` is `None` where the field is there but holds no
/// version (`latest`, `${KUBERNETES_VERSION}`, `{{ .Values.tag }}`): unknown, never guessed,
/// and still listed by `meshjob versions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub what: What,
    pub value: Option<Value>,
    pub place: Arc<ManifestPlace>,
}

impl Found {
    pub(crate) fn release(&self) -> Option<Release> {
        match self.value {
            Some(Value::Release(r)) => Some(r),
            _ => None,
        }
    }

    pub(crate) fn kubernetes(&self) -> Option<Version> {
        match self.value {
            Some(Value::Kubernetes(v)) => Some(v),
            _ => None,
        }
    }

    pub(crate) fn native(&self) -> Option<NativeMode> {
        match self.value {
            Some(Value::Native(m)) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn port(&self) -> Option<u16> {
        match self.value {
            Some(Value::Port(p)) => Some(p),
            _ => None,
        }
    }

    /// The value as a finding or `meshjob versions` shows it: `1.29`, `edge-25.10.2`, `on`,
    /// `unknown`.
    pub(crate) fn shown(&self) -> String {
        match self.value {
            Some(Value::Release(r)) => r.to_string(),
            Some(Value::Kubernetes(v)) => v.to_string(),
            Some(Value::Native(m)) => m.as_str().into(),
            Some(Value::Port(p)) => p.to_string(),
            None => "unknown".into(),
        }
    }
}

/// Where the document being read sits: its file (`None`: the text being processed), and the
/// offset and line breaks before it in its text.
#[derive(Clone, Debug, Default)]
pub(crate) struct Base {
    pub file: Option<Arc<str>>,
    pub offset: usize,
    pub line: usize,
}

/// Records what one document says, each with its place.
pub(crate) struct Finder<'a> {
    /// The document's text (a piece of a stream), which node offsets are in.
    pub src: &'a str,
    pub base: &'a Base,
    /// The object being read, for messages: `Deployment/istiod`.
    pub object: String,
    pub found: Vec<Found>,
}

impl<'a> Finder<'a> {
    pub(crate) fn new(src: &'a str, base: &'a Base) -> Self {
        Finder {
            src,
            base,
            object: String::new(),
            found: Vec::new(),
        }
    }

    /// Records `value` as the version of `what`, read at `node` (whose text is shown) in
    /// `field` of the current object.
    pub(crate) fn push(&mut self, what: What, value: Option<Value>, node: &Node, field: &str) {
        self.push_at(
            what,
            value,
            node.start,
            node.as_str().unwrap_or_default(),
            field,
        );
    }

    /// Records `value`, read at byte `at` of the document as `text`.
    pub(crate) fn push_at(
        &mut self,
        what: What,
        value: Option<Value>,
        at: usize,
        text: &str,
        field: &str,
    ) {
        let (line, col) = crate::yaml::text::line_col(self.src, at);
        let place = ManifestPlace {
            file: self.base.file.clone(),
            offset: self.base.offset + at,
            line: self.base.line + line,
            col,
            object: self.object.clone(),
            field: field.to_string(),
            text: text.to_string(),
        };
        self.found.push(Found {
            what,
            value,
            place: Arc::new(place),
        });
    }

    /// Records a port read from `node` (`None` when it is no port number: a template).
    pub(crate) fn port(&mut self, what: What, node: &Node, field: &str) {
        let value = node.as_str().and_then(parse_port).map(Value::Port);
        self.push(what, value, node, field);
    }

    /// Records a release read from `node`'s text (`None` when it is no version).
    pub(crate) fn release(&mut self, what: What, node: &Node, field: &str) {
        let value = node.as_str().and_then(Release::read).map(Value::Release);
        self.push(what, value, node, field);
    }
}

/// A port number as a manifest writes it (`15020`, `"15020"`); `0` is a port too (a server
/// turned off).
pub(crate) fn parse_port(text: &str) -> Option<u16> {
    let t = text.trim();
    let digits = !t.is_empty() && t.len() <= 5 && t.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| t.parse().ok()).flatten()
}

/// The tag of an image reference, without a digest: `gcr.io/istio-release/pilot:1.29.1` ->
/// `1.29.1`; `None` without a tag. The repository is what comes before it.
pub(crate) fn image_tag(image: &str) -> Option<(&str, &str)> {
    let image = image.split_once('@').map_or(image, |(i, _)| i);
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    let colon = image[slash..].rfind(':')? + slash;
    Some((&image[..colon], &image[colon + 1..]))
}

/// Whether the last path components of image repository `repo` are `name` (`pilot`,
/// `istio/proxyv2`).
pub(crate) fn repo_is(repo: &str, name: &str) -> bool {
    repo == name || repo.ends_with(&format!("/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        assert_eq!(
            image_tag("gcr.io/istio-release/pilot:1.29.1"),
            Some(("gcr.io/istio-release/pilot", "1.29.1"))
        );
        assert_eq!(
            image_tag("kindest/node:v1.29.0@sha256:abc"),
            Some(("kindest/node", "v1.29.0"))
        );
        assert_eq!(image_tag("localhost:5000/pilot"), None);
        assert_eq!(
            image_tag("localhost:5000/pilot:1.2.3"),
            Some(("localhost:5000/pilot", "1.2.3"))
        );
        assert!(repo_is("gcr.io/istio-release/proxyv2", "proxyv2"));
        assert!(!repo_is("gcr.io/istio-release/xproxyv2", "proxyv2"));
    }
}

/// A Helm chart that a GitOps object installs, with the version it pins and the values it
/// gives: a Flux `HelmRelease` (helm.toolkit.fluxcd.io; fluxcd/helm-controller@00785fbfa3cb
/// `api/v2/helmrelease_types.go`: `spec.chart.spec.chart`, `spec.chart.spec.version` "semver
/// expression", `spec.values`) or an Argo CD `Application` (argoproj.io; argoproj/argo-cd@0017d06856f0
/// `pkg/apis/application/v1alpha1/types.go`: `spec.source` or each of `spec.sources`, with
/// `chart`, `targetRevision`, and `helm.valuesObject`, `helm.values` (a string) and
/// `helm.parameters`).
pub(crate) struct Chart<'n> {
    pub name: &'n str,
    /// The version it pins, with its field.
    pub version: Option<(&'n Node, String)>,
    /// Its values, with their field.
    pub values: Vec<(Values<'n>, String)>,
}

/// Helm values as a GitOps object gives them.
#[derive(Clone, Copy)]
pub(crate) enum Values<'n> {
    /// A mapping.
    Map(&'n Node),
    /// Argo CD's `helm.parameters`: `{name: global.tag, value: "1.29.1"}` items.
    Params(&'n [Node]),
}

impl<'n> Values<'n> {
    /// The value at a dotted path (`global.tag`).
    pub(crate) fn get(self, dotted: &str) -> Option<&'n Node> {
        match self {
            Values::Map(m) => dotted.split('.').try_fold(m, |n, k| n.get(k)),
            Values::Params(items) => (items.iter())
                .find(|p| p.str("name") == Some(dotted))
                .and_then(|p| p.get("value")),
        }
    }
}

/// The charts `obj` installs, when it is a `HelmRelease` or an `Application`. An Argo CD
/// `helm.values` string is read by `embedded`, with the node that holds it.
pub(crate) fn charts<'n>(obj: &'n Node) -> Vec<Chart<'n>> {
    let group = obj
        .str("apiVersion")
        .and_then(|a| a.split_once('/'))
        .map(|(g, _)| g);
    let spec = obj.get("spec");
    match (group, obj.str("kind")) {
        (Some("helm.toolkit.fluxcd.io"), Some("HelmRelease")) => {
            let chart = spec.and_then(|s| s.path(&["chart", "spec"]));
            let Some(name) = chart.and_then(|c| c.str("chart")) else {
                return Vec::new();
            };
            let values = spec
                .and_then(|s| s.get("values"))
                .filter(|v| v.entries().is_some());
            vec![Chart {
                name,
                version: chart
                    .and_then(|c| c.get("version"))
                    .map(|v| (v, "spec.chart.spec.version".to_string())),
                values: values
                    .map(|v| (Values::Map(v), "spec.values".to_string()))
                    .into_iter()
                    .collect(),
            }]
        }
        (Some("argoproj.io"), Some("Application")) => argo_sources(obj)
            .into_iter()
            .filter_map(|(src, at)| {
                let name = src.str("chart")?;
                let helm = src.get("helm");
                let mut values = Vec::new();
                if let Some(v) = helm.and_then(|h| h.get("parameters")).and_then(Node::items) {
                    values.push((Values::Params(v), format!("{at}.helm.parameters")));
                }
                if let Some(v) = helm.and_then(|h| h.get("valuesObject")) {
                    values.push((Values::Map(v), format!("{at}.helm.valuesObject")));
                }
                Some(Chart {
                    name,
                    version: src
                        .get("targetRevision")
                        .map(|v| (v, format!("{at}.targetRevision"))),
                    values,
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The sources of an Argo CD `Application`: `spec.source`, then each of `spec.sources`,
/// with their fields.
fn argo_sources(obj: &Node) -> Vec<(&Node, String)> {
    let spec = obj.get("spec");
    let one = spec
        .and_then(|s| s.get("source"))
        .map(|s| (s, "spec.source".to_string()));
    let many = (spec.and_then(|s| s.get("sources")).and_then(Node::items))
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| (s, format!("spec.sources[{i}]")));
    one.into_iter().chain(many).collect()
}

/// The `helm.values` strings of an Argo CD `Application`'s sources whose chart is `chart`,
/// with their field.
pub(crate) fn argo_values_text<'n>(obj: &'n Node, chart: &str) -> Vec<(&'n Node, String)> {
    if obj.str("kind") != Some("Application") {
        return Vec::new();
    }
    argo_sources(obj)
        .into_iter()
        .filter(|(s, _)| s.str("chart") == Some(chart))
        .filter_map(|(s, at)| {
            let v = s.path(&["helm", "values"])?;
            v.as_str().map(|_| (v, format!("{at}.helm.values")))
        })
        .collect()
}

impl Finder<'_> {
    /// Reads the YAML text held by string `node` with `read`, each place mapped back into
    /// this document (`yaml::embedded::outer_offset`). Text that does not parse says
    /// nothing.
    pub(crate) fn embedded(&mut self, node: &Node, read: impl FnOnce(&Node, &mut Finder<'_>)) {
        let Some(text) = node.as_str() else { return };
        let Ok(docs) = crate::yaml::tree::parse_stream(text) else {
            return;
        };
        let Some(doc) = docs.first() else { return };
        let base = Base::default();
        let mut inner = Finder::new(text, &base);
        inner.object = self.object.clone();
        read(&doc.root, &mut inner);
        for mut found in inner.found {
            let at = crate::yaml::embedded::outer_offset(self.src, node, found.place.offset);
            let (line, col) = crate::yaml::text::line_col(self.src, at);
            let p = Arc::make_mut(&mut found.place);
            p.file = self.base.file.clone();
            p.offset = self.base.offset + at;
            p.line = self.base.line + line;
            p.col = col;
            self.found.push(found);
        }
    }
}
