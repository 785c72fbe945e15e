//! The `kinds` key: its entries (part of the config document, and so of its schema), and
//! their rows of the kinds table, and back (`meshjob config`).

use crate::kinds::{Fixes, KindRow, Kinds, Pattern, RowOrigin, Shape, Wrapper, split_api_version};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One entry of `kinds`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("oneOf" = [{ "required": ["apiVersion"] }, { "required": ["group"] }]))]
pub struct KindEntry {
    /// The kind's `apiVersion`, `group/version` (`v1` for the core group): this version
    /// only. Give this or `group`.
    ///
    /// ```yaml
    /// apiVersion: k6.io/v1alpha1
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([^/\s]+/)?[^/\s]+$"))]
    pub api_version: Option<String>,
    /// The kind's API group, for every version of it (`""` for the core group). Give this
    /// or `apiVersion`.
    ///
    /// ```yaml
    /// group: k6.io
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[^/\s]*$"))]
    pub group: Option<String>,
    /// The kind, as written in `kind:`.
    ///
    /// ```yaml
    /// kind: TestRun
    /// ```
    #[schemars(regex(pattern = r"^\S+$"))]
    pub kind: String,
    /// Where the pod templates are, from the object's root: keys separated by `.`, `[*]`
    /// after a key for every item of its list, `*` for every value of a mapping (quote a
    /// path with `[*]` or `*` in a flow list). Needed for a kind meshjob does not know; not
    /// allowed for a built-in one.
    ///
    /// ```yaml
    /// podTemplates:
    ///   - spec.runner
    ///   - spec.replicatedJobs[*].template.spec.template
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = { "type": "string", "pattern": POD_TEMPLATE_PATTERN }))]
    pub pod_templates: Option<Vec<String>>,
    /// The fixes its pods may get: `native` (the mesh's native-sidecar annotation),
    /// `wrapper` (the entrypoint wrapper). An empty list leaves the kind alone.
    ///
    /// ```yaml
    /// fixes: [native, wrapper]
    /// ```
    pub fixes: Vec<FixName>,
}

/// The schema's pattern for a pod template path (`crate::kinds::Pattern::parse`).
const POD_TEMPLATE_PATTERN: &str = r"^(\*|[^.\[\]*\s]+(\[\*\])?)(\.(\*|[^.\[\]*\s]+(\[\*\])?))*$";

/// A fix, in `kinds`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FixName {
    /// The mesh's native-sidecar annotation.
    Native,
    /// The entrypoint wrapper.
    Wrapper,
}

/// Why the wrapper is out for a kind whose entry does not list it.
const NO_WRAPPER: &str = "its entry in the config's `kinds` does not allow the wrapper";

/// The fixes an entry lists.
fn fixes(names: &[FixName]) -> Fixes {
    Fixes {
        wrapper: if names.contains(&FixName::Wrapper) {
            Wrapper::Allowed
        } else {
            Wrapper::Never(NO_WRAPPER)
        },
        native: names.contains(&FixName::Native),
    }
}

/// The row of one entry: a new kind, or a built-in kind with its fixes narrowed.
pub(super) fn row(e: &KindEntry) -> Result<KindRow, String> {
    let (group, versions) = match (&e.api_version, &e.group) {
        (Some(api), None) => match split_api_version(api) {
            (g, v) if !v.is_empty() && !api.ends_with('/') => (g.to_string(), vec![v.to_string()]),
            _ => return Err(format!("apiVersion {api:?} has no version")),
        },
        (None, Some(g)) => (g.clone(), Vec::new()),
        _ => {
            return Err(format!(
                "{}: give `apiVersion` (that version only) or `group` (every version), one of the two",
                e.kind
            ));
        }
    };
    if e.kind.is_empty() || e.kind.chars().any(char::is_whitespace) {
        return Err(format!("{:?} is not a kind", e.kind));
    }
    let wanted = fixes(&e.fixes);
    if let Some(builtin) = Kinds::builtin_row(&group, &e.kind) {
        if e.pod_templates.is_some() {
            return Err(format!(
                "{} of {} is a built-in kind, whose pod templates are built in too; give only \
                 `fixes`, to narrow them",
                e.kind,
                builtin.api_versions()
            ));
        }
        let narrowed = builtin.fixes.narrow(wanted);
        if narrowed.native != wanted.native
            || matches!(builtin.fixes.wrapper, Wrapper::Never(_))
                && e.fixes.contains(&FixName::Wrapper)
        {
            return Err(format!(
                "{} does not allow every fix its entry lists; an entry for a built-in kind can \
                 only narrow its fixes (see docs/changes.md)",
                e.kind
            ));
        }
        return Ok(KindRow {
            versions: if versions.is_empty() {
                builtin.versions.clone()
            } else {
                versions
            },
            fixes: narrowed,
            origin: RowOrigin::ConfigNarrowing,
            ..builtin.clone()
        });
    }
    let paths = e.pod_templates.as_deref().unwrap_or_default();
    if paths.is_empty() {
        return Err(format!(
            "{} is not a kind meshjob knows: give the paths of its pod templates in \
             `podTemplates`, such as [spec.template]",
            e.kind
        ));
    }
    let templates = (paths.iter())
        .map(|p| Pattern::parse(p, Shape::Template))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(KindRow::from_config(
        &group, versions, &e.kind, templates, wanted,
    ))
}

/// The entry that gives `row` back.
pub(super) fn entry(row: &KindRow) -> KindEntry {
    let (api_version, group) = match row.versions.as_slice() {
        [v] if row.group.is_empty() => (Some(v.clone()), None),
        [v] => (Some(format!("{}/{v}", row.group)), None),
        _ => (None, Some(row.group.clone())),
    };
    let mut names = Vec::new();
    if row.fixes.native {
        names.push(FixName::Native);
    }
    if !matches!(row.fixes.wrapper, Wrapper::Never(_)) {
        names.push(FixName::Wrapper);
    }
    KindEntry {
        api_version,
        group,
        kind: row.kind.clone(),
        pod_templates: (row.origin == RowOrigin::Config).then(|| {
            row.templates
                .iter()
                .map(|p| p.as_str().to_string())
                .collect()
        }),
        fixes: names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_of(api: Option<&str>, group: Option<&str>, kind: &str) -> KindEntry {
        KindEntry {
            api_version: api.map(String::from),
            group: group.map(String::from),
            kind: kind.into(),
            pod_templates: None,
            fixes: vec![FixName::Native],
        }
    }

    #[test]
    fn entries_and_rows() {
        let mut k6 = entry_of(Some("k6.io/v1alpha1"), None, "TestRun");
        assert!(row(&k6).unwrap_err().contains("podTemplates"));
        k6.pod_templates = Some(vec!["spec.runner".into(), "spec.starter".into()]);
        k6.fixes.push(FixName::Wrapper);
        let r = row(&k6).unwrap();
        assert_eq!(
            (r.group.as_str(), r.versions.as_slice()),
            ("k6.io", &["v1alpha1".to_string()][..])
        );
        assert_eq!(r.fixes, Fixes::ALL);
        assert_eq!(entry(&r), k6);

        let job = entry_of(None, Some("batch"), "Job");
        let r = row(&job).unwrap();
        assert_eq!(r.origin, RowOrigin::ConfigNarrowing);
        assert!(r.fixes.native && matches!(r.fixes.wrapper, Wrapper::Never(_)));
        assert_eq!(
            r.templates,
            Kinds::builtin_row("batch", "Job").unwrap().templates
        );
        assert_eq!(row(&entry(&r)).unwrap(), r);

        let mut argo = entry_of(Some("argoproj.io/v1alpha1"), None, "Workflow");
        argo.fixes = vec![FixName::Wrapper];
        assert!(row(&argo).unwrap_err().contains("only narrow"));
        argo.fixes.clear();
        assert!(row(&argo).unwrap().fixes.is_none());

        assert!(row(&entry_of(None, None, "X")).is_err());
        assert!(row(&entry_of(Some("a/"), None, "X")).is_err());
        let mut both = entry_of(Some("a/v1"), Some("a"), "X");
        both.pod_templates = Some(vec!["spec".into()]);
        assert!(row(&both).is_err());
        let mut bad = entry_of(Some("a/v1"), None, "X");
        bad.pod_templates = Some(vec!["spec..x".into()]);
        assert!(row(&bad).unwrap_err().contains("invalid pod template path"));
        let mut builtin_paths = entry_of(Some("batch/v1"), None, "Job");
        builtin_paths.pod_templates = Some(vec!["spec.template".into()]);
        assert!(row(&builtin_paths).unwrap_err().contains("built-in"));
    }
}
