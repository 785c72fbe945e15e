//! Sets and lints a ProxyConfig mapping: the pod annotation `proxy.istio.io/config`, or
//! `meshConfig.defaultConfig` of the mesh configuration.
//!
//! Keys the user set keep their values; a value that contradicts the tool is a warning
//! (overwritten only with `--force`). Values Istio would reject are errors, fixed where the
//! right value is known: a quoted boolean, an unquoted `proxyMetadata` value, a bad duration.

use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::locate::{duplicate_key_message, first_shared, refusal};
use crate::mesh::istio;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::{ScalarType, resolve, string_key};

/// What the ProxyConfig should hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Desired {
    pub hold: bool,
    pub drain: crate::config::GoDuration,
    pub exit_on_zero: bool,
    pub force: bool,
}

impl Desired {
    pub(crate) fn from_settings(s: &Settings) -> Self {
        Desired {
            hold: s.hold_application_until_proxy_starts,
            drain: s.drain_duration.clone(),
            exit_on_zero: s.exit_on_zero_active_connections,
            force: s.force,
        }
    }

    /// The settings as new mapping entries.
    pub(crate) fn entries(&self) -> Vec<(String, Out)> {
        let mut v = Vec::new();
        if self.hold {
            v.push((istio::HOLD_APPLICATION.to_string(), Out::Bool(true)));
        }
        v.push((
            istio::TERMINATION_DRAIN_DURATION.to_string(),
            Out::Str(self.drain.to_string()),
        ));
        if self.exit_on_zero {
            v.push((istio::PROXY_METADATA.to_string(), self.metadata()));
        }
        v
    }

    fn metadata(&self) -> Out {
        Out::Map(vec![(
            istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS.to_string(),
            Out::Str("true".into()),
        )])
    }

    /// The settings as fresh text (YAML block, or JSON).
    pub(crate) fn fresh_text(&self, json: bool) -> String {
        let st = crate::yaml::emit::Style {
            json,
            ..Default::default()
        };
        if json {
            return crate::yaml::emit::flow(&Out::Map(self.entries()), &st);
        }
        let mut s = String::new();
        for (k, v) in self.entries() {
            s.push_str(&k);
            s.push(':');
            s.push_str(&crate::yaml::emit::after_key(&v, 0, &st));
            s.push('\n');
        }
        s
    }
}

fn scalar_type(n: &Node) -> Option<ScalarType> {
    match &n.kind {
        Kind::Scalar { value, style } => Some(resolve(value, *style, n.tag.as_deref(), n.empty)),
        _ => None,
    }
}

/// Makes ProxyConfig mapping `map` (at `path` in `ed`'s document) hold `d`, and lints it.
/// Findings carry offsets into `ed.src`.
pub(crate) fn merge(
    ed: &mut Editor<'_>,
    map: &Node,
    path: &[Seg],
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let Some(entries) = map.entries() else {
        out.push(Finding::error(
            Rule::ProxyConfigNotMapping,
            map.start,
            "ProxyConfig must be a mapping",
        ));
        return;
    };
    // An anchor, alias or merge key anywhere in it: a setting could reach other places
    // through an alias, or a merged value override what is written.
    if let Some((n, why)) = first_shared(map) {
        out.push(Finding::error(
            Rule::SharedNode,
            n.props_start,
            refusal(why),
        ));
        return;
    }
    // A key written twice: Istio reads the last, meshjob would read or edit the first.
    let md = map.get(istio::PROXY_METADATA);
    for (n, what) in [(Some(map), "ProxyConfig"), (md, "`proxyMetadata`")] {
        if let Some(k) = n.and_then(Node::duplicate_key) {
            out.push(Finding::error(
                Rule::DuplicateKey,
                k.start,
                duplicate_key_message(what, k.as_str().unwrap_or_default()),
            ));
            return;
        }
    }
    for e in entries {
        let Some(k) = e.key.as_str() else { continue };
        if k == istio::MISSPELLED_HOLD_APPLICATION {
            out.push(Finding::warning(
                Rule::MisspelledHold,
                e.key.start,
                format!(
                    "`{k}` is not a ProxyConfig field and Istio ignores it; the field is `{}`",
                    istio::HOLD_APPLICATION
                ),
            ));
        } else if !istio::is_proxy_config_field(k) {
            out.push(Finding::warning(
                Rule::UnknownField,
                e.key.start,
                format!("`{k}` is not a ProxyConfig field; Istio drops unknown fields silently"),
            ));
        }
    }
    hold(ed, map, path, d, out);
    durations(ed, map, path, d, out);
    metadata(ed, map, path, d, out);
}

fn hold(ed: &mut Editor<'_>, map: &Node, path: &[Seg], d: &Desired, out: &mut Vec<Finding>) {
    let key = istio::HOLD_APPLICATION;
    let Some(e) = map.entry(key) else {
        if d.hold {
            ed.insert_entry(map, path, None, key, &Out::Bool(true));
        }
        return;
    };
    let v = &e.value;
    let text = v.as_str().unwrap_or_default().to_ascii_lowercase();
    let as_bool = match scalar_type(v) {
        Some(ScalarType::Bool) => Some(matches!(text.as_str(), "true" | "yes" | "on" | "y")),
        Some(ScalarType::Str) if text == "true" || text == "false" => {
            // The quoted text says what the user meant; only --force overrides it, and only
            // where the tool sets the field itself (not mesh-wide).
            let fix = (d.hold && d.force) || text == "true";
            out.push(
                Finding::error(
                    Rule::NotBoolean,
                    v.start,
                    format!(
                        "`{key}` must be a boolean; Istio rejects the quoted string {:?}",
                        v.as_str().unwrap_or_default()
                    ),
                )
                .fixed(),
            );
            ed.replace_value(map, &e.key, v, path, key, &Out::Bool(fix));
            if d.hold && !fix {
                out.push(contradiction_hold(v.start));
            }
            return;
        }
        _ => {
            out.push(Finding::error(
                Rule::NotBoolean,
                v.start,
                format!("`{key}` must be a boolean (true or false)"),
            ));
            None
        }
    };
    if as_bool == Some(false) && d.hold {
        if d.force {
            ed.replace_value(map, &e.key, v, path, key, &Out::Bool(true));
        } else {
            out.push(contradiction_hold(v.start));
        }
    }
}

fn contradiction_hold(at: usize) -> Finding {
    Finding::warning(
        Rule::KeptUserValue,
        at,
        format!(
            "keeping `{}: false`: the task may start before the proxy is ready, and its first \
             connections fail (use --force to set true)",
            istio::HOLD_APPLICATION
        ),
    )
}

fn durations(ed: &mut Editor<'_>, map: &Node, path: &[Seg], d: &Desired, out: &mut Vec<Finding>) {
    for &key in istio::DURATION_FIELDS {
        let ours = key == istio::TERMINATION_DRAIN_DURATION;
        let Some(e) = map.entry(key) else {
            if ours {
                ed.insert_entry(map, path, None, key, &Out::Str(d.drain.to_string()));
            }
            continue;
        };
        let v = &e.value;
        let valid = match (scalar_type(v), v.as_str()) {
            (Some(ScalarType::Str), Some(s)) => crate::config::parse_go_duration(s).and_then(|n| {
                if n < 0 {
                    Err(format!("invalid duration {s:?}: must not be negative"))
                } else {
                    Ok(n)
                }
            }),
            (Some(ScalarType::Null), _) => {
                Err("is empty; write a Go duration string such as \"5s\"".to_string())
            }
            (Some(ScalarType::Int | ScalarType::Float), Some(s)) => Err(format!(
                "`{s}` is a number, not a duration; write a Go duration string such as \"5s\", \
                 \"500ms\" or \"1m30s\""
            )),
            _ => Err("must be a Go duration string such as \"5s\"".to_string()),
        };
        match valid {
            Err(msg) => {
                let f = Finding::error(Rule::InvalidDuration, v.start, format!("`{key}`: {msg}"));
                if ours {
                    out.push(f.fixed());
                    ed.replace_value(map, &e.key, v, path, key, &Out::Str(d.drain.to_string()));
                } else {
                    out.push(f);
                }
            }
            Ok(n) if ours => {
                if n != d.drain.nanos() {
                    if d.force {
                        ed.replace_value(map, &e.key, v, path, key, &Out::Str(d.drain.to_string()));
                    } else {
                        out.push(Finding::warning(
                            Rule::KeptUserValue,
                            v.start,
                            format!(
                                "keeping `{key}: {}` instead of {}: without \
                                 EXIT_ON_ZERO_ACTIVE_CONNECTIONS the proxy waits this long \
                                 before it exits after SIGTERM (use --force to overwrite)",
                                v.as_str().unwrap_or_default(),
                                d.drain
                            ),
                        ));
                    }
                }
            }
            Ok(_) => {}
        }
    }
}

fn metadata(ed: &mut Editor<'_>, map: &Node, path: &[Seg], d: &Desired, out: &mut Vec<Finding>) {
    let key = istio::PROXY_METADATA;
    let Some(e) = map.entry(key) else {
        if d.exit_on_zero {
            ed.insert_entry(map, path, None, key, &d.metadata());
        }
        return;
    };
    let mpath = child(path, key);
    let md = &e.value;
    if md.is_null() {
        if d.exit_on_zero {
            ed.replace_value(map, &e.key, md, path, key, &d.metadata());
        }
        return;
    }
    let Some(entries) = md.entries() else {
        out.push(Finding::error(
            Rule::MetadataNotStrings,
            md.start,
            "`proxyMetadata` must be a mapping of strings",
        ));
        return;
    };
    let exit_key = istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS;
    for me in entries {
        // A key with a tag of its own (`!t k`), a null, a boolean or a number is not a
        // string key: the entry is left alone, and said to be wrong (istiod reads
        // `proxyMetadata` as a map of strings).
        let Some(k) = string_key(&me.key) else {
            out.push(Finding::error(
                Rule::MetadataNotStrings,
                me.key.start,
                "a `proxyMetadata` key must be a string; quote it (meshjob leaves this entry \
                 alone)",
            ));
            continue;
        };
        let v = &me.value;
        let ty = scalar_type(v);
        let ours = k == exit_key && d.exit_on_zero;
        let text = v.as_str().unwrap_or_default();
        match ty {
            Some(ScalarType::Str) => {
                if ours && text != "true" {
                    if d.force {
                        ed.replace_value(md, &me.key, v, &mpath, k, &Out::Str("true".into()));
                    } else {
                        out.push(Finding::warning(
                            Rule::KeptUserValue,
                            v.start,
                            format!(
                                "keeping `{k}: {text:?}`: the proxy then sits out the whole \
                                 terminationDrainDuration before it exits (use --force to set \"true\")"
                            ),
                        ));
                    }
                }
            }
            // A null is no value at all: quoting its text (`"~"`) would give it one. meshjob's
            // own key gets "true"; any other key is the user's to write.
            Some(ScalarType::Null) if ours => {
                out.push(
                    Finding::error(
                        Rule::MetadataNotStrings,
                        v.start,
                        format!(
                            "proxyMetadata value `{k}` is null; istiod rejects the whole mesh \
                             config unless it is a string (istio#48991): set to \"true\""
                        ),
                    )
                    .fixed(),
                );
                ed.replace_value(md, &me.key, v, &mpath, k, &Out::Str("true".into()));
            }
            Some(ScalarType::Null) => out.push(Finding::error(
                Rule::MetadataNotStrings,
                v.start,
                format!(
                    "proxyMetadata value `{k}` is null; istiod rejects the whole mesh config \
                     unless it is a string (istio#48991): write the string you mean (`\"\"` \
                     for an empty one)"
                ),
            )),
            Some(_) => {
                let fixed_text = if ours && d.force { "true" } else { text }.to_string();
                out.push(
                    Finding::error(
                        Rule::MetadataNotStrings,
                        v.start,
                        format!(
                            "proxyMetadata value `{k}: {text}` must be a quoted string; istiod \
                             rejects the whole mesh config otherwise (istio#48991)"
                        ),
                    )
                    .fixed(),
                );
                ed.replace_value(md, &me.key, v, &mpath, k, &Out::Str(fixed_text.clone()));
                if ours && !matches!(fixed_text.as_str(), "true") {
                    out.push(Finding::warning(
                        Rule::KeptUserValue,
                        v.start,
                        format!("keeping `{k}: {fixed_text:?}` (use --force to set \"true\")"),
                    ));
                }
            }
            None => out.push(Finding::error(
                Rule::MetadataNotStrings,
                v.start,
                format!("proxyMetadata value `{k}` must be a string"),
            )),
        }
    }
    if d.exit_on_zero && md.entry(exit_key).is_none() {
        ed.insert_entry(md, &mpath, None, exit_key, &Out::Str("true".into()));
    }
}
