//! Linkerd's mesh-wide configuration documents, recognised: the Helm values of the
//! `linkerd-control-plane` chart. A values document has no apiVersion or kind; it is
//! recognised by keys only that chart has ([`linkerd::DISTINCT_TOP_KEYS`], or a `proxy`
//! mapping with one of [`linkerd::DISTINCT_PROXY_KEYS`]). The chart's own values.yaml (its
//! defaults) is left alone: users set values in their own file. What meshjob writes there is
//! the Linkerd planner's.

use crate::locate::objects;
use crate::mesh::linkerd;
use crate::yaml::tree::Node;

/// What to do with one document.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Edit,
    /// Linkerd values, but not the user's own; the reason is shown as an info.
    LeaveAlone(String),
    Ignore,
}

/// Whether a document holds a values document that the planner edits or reports on.
pub(crate) fn holds(root: &Node) -> bool {
    objects(root).into_iter().any(|(obj, _, listed)| {
        !listed && obj.str("apiVersion").is_none() && obj.str("kind").is_none() && is_values(obj)
    })
}

/// Whether a document without a kind holds the control-plane chart's values (its own
/// defaults too).
pub(crate) fn is_values(obj: &Node) -> bool {
    classify(obj) != Verdict::Ignore
}

pub(crate) fn classify(obj: &Node) -> Verdict {
    let has = |k: &str| obj.get(k).is_some();
    let proxy_keys = obj.get(linkerd::VALUES_PROXY).and_then(Node::entries);
    let distinct_proxy = proxy_keys.is_some_and(|es| {
        es.iter().any(|e| {
            e.key
                .as_str()
                .is_some_and(|k| linkerd::DISTINCT_PROXY_KEYS.contains(&k))
        })
    });
    if !distinct_proxy && !linkerd::DISTINCT_TOP_KEYS.iter().any(|k| has(k)) {
        return Verdict::Ignore;
    }
    let placeholder = obj.str("linkerdVersion") == Some(linkerd::VALUES_VERSION_PLACEHOLDER);
    if placeholder || linkerd::CHART_DEFAULTS_KEYS.iter().all(|k| has(k)) {
        return Verdict::LeaveAlone(
            "these look like the linkerd-control-plane chart's own values.yaml (its defaults); \
             set proxy values in your own values file instead; left alone"
                .to_string(),
        );
    }
    Verdict::Edit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::parse_stream;

    fn verdict(src: &str) -> Verdict {
        let docs = parse_stream(src).unwrap();
        classify(&docs[0].root)
    }

    #[test]
    fn detection() {
        assert_eq!(verdict("identityTrustAnchorsPEM: x\n"), Verdict::Edit);
        assert_eq!(verdict("proxy:\n  await: true\n"), Verdict::Edit);
        // A `proxy` of another chart.
        assert_eq!(
            verdict("proxy:\n  image: x\n  resources: {}\n"),
            Verdict::Ignore
        );
        assert_eq!(verdict("replicaCount: 1\n"), Verdict::Ignore);
        assert!(matches!(
            verdict("linkerdVersion: linkerdVersionValue\nproxy: {}\n"),
            Verdict::LeaveAlone(_)
        ));
        let all: String = linkerd::CHART_DEFAULTS_KEYS
            .iter()
            .map(|k| format!("{k}: x\n"))
            .collect();
        assert!(matches!(verdict(&all), Verdict::LeaveAlone(_)));
    }
}
