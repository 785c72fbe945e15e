//! Per-object control: annotations under meshjob's own domain (`meshjob.dev`, the group of
//! its config document) that pin a pod's strategy or leave it out of meshjob, the way
//! kube-linter reads `kube-linter.io/ignore-all` on an object: the key's presence counts,
//! its value is a reason for the reader (stackrox/kube-linter@v0.8.3
//! `pkg/ignore/ignore.go`). Each is read on the pod template first, then on the object that
//! holds it: the template is the narrower place (one replica of a JobSet, say).

use crate::config::StrategyChoice;
use crate::pod::Pod;

/// Pins the strategy of the pods it is on: `auto`, `wrapper`, `native` or `none`, as
/// `--strategy` takes them; it wins over the run's strategy.
pub(crate) const STRATEGY_KEY: &str = "meshjob.dev/strategy";
/// Leaves the pods it is on alone: nothing is written and only an info note is said. Its
/// value is the reason, shown in the note (kube-linter's convention).
pub(crate) const IGNORE_KEY: &str = "meshjob.dev/ignore";

/// Where an annotation was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PinPlace {
    /// The pod template's own metadata.
    Template,
    /// The object's metadata (`Job/x`).
    Object(String),
}

impl PinPlace {
    /// `on the pod template`, `on Job/x`.
    pub(crate) fn text(&self) -> String {
        match self {
            PinPlace::Template => "on the pod template".to_string(),
            PinPlace::Object(name) => format!("on {name}"),
        }
    }
}

/// Where the strategy of a pod comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum By {
    /// The run's setting (`--strategy`, or `strategy` in the config).
    Setting,
    /// The pod's [`STRATEGY_KEY`] annotation; `over`: the run's strategy it overrides, when
    /// that differs and is not `auto`.
    Pin {
        place: PinPlace,
        over: Option<StrategyChoice>,
    },
}

impl By {
    /// Names the choice for a message: `--strategy native`, or `meshjob.dev/strategy:
    /// native on the pod template, over the run's strategy wrapper`.
    pub(crate) fn text(&self, choice: StrategyChoice) -> String {
        let choice = choice.as_str();
        match self {
            By::Setting => format!("--strategy {choice}"),
            By::Pin { place, over } => {
                let over = over.map_or_else(String::new, |o| {
                    format!(", over the run's strategy {}", o.as_str())
                });
                format!("{STRATEGY_KEY}: {choice} {}{over}", place.text())
            }
        }
    }
}

/// The value of annotation `key` on the pod template, else on its object.
fn annotation<'d>(pod: &Pod<'d>, key: &str) -> Option<(&'d str, PinPlace)> {
    if let Some(v) = pod.annotation(key) {
        return Some((v, PinPlace::Template));
    }
    let on_object = pod
        .object_node
        .get("metadata")?
        .get("annotations")?
        .str(key)?;
    Some((on_object, PinPlace::Object(pod.describe())))
}

/// The reason the pod is left out of meshjob ([`IGNORE_KEY`]), and where it says so.
pub(crate) fn ignored(pod: &Pod<'_>) -> Option<(String, PinPlace)> {
    annotation(pod, IGNORE_KEY).map(|(v, place)| (v.to_string(), place))
}

/// The pod's strategy and where it comes from: its [`STRATEGY_KEY`] annotation, else the
/// run's `setting`. `Err`: the annotation's value, which is not a strategy, and where it is.
pub(crate) fn strategy(
    pod: &Pod<'_>,
    setting: StrategyChoice,
) -> Result<(StrategyChoice, By), (String, PinPlace)> {
    let Some((value, place)) = annotation(pod, STRATEGY_KEY) else {
        return Ok((setting, By::Setting));
    };
    let choice = match value {
        "auto" => StrategyChoice::Auto,
        "wrapper" => StrategyChoice::Wrapper,
        "native" => StrategyChoice::Native,
        "none" => StrategyChoice::None,
        _ => return Err((value.to_string(), place)),
    };
    let over = (setting != choice && setting != StrategyChoice::Auto).then_some(setting);
    Ok((choice, By::Pin { place, over }))
}
