//! Which rules a run reports: `select` and `ignore` of rule codes and prefixes, layered as
//! ruff layers them (astral-sh/ruff `crates/ruff_workspace/src/configuration.rs`,
//! `as_rule_table`): each layer (the config file, then the flags) applies its selectors
//! from the least specific to the most (`ALL`, `MJ`, `MJ1`, `MJ12`, `MJ120`), `select`
//! before `ignore` at the same specificity; a layer that has `select` starts from nothing,
//! one that has only `ignore` takes away from the layer below.
//!
//! Selection changes what is reported, counted and failed on, never what is written: a pod
//! refused by an ignored rule is still left as it is (see docs/cli.md, "Selecting rules").

use crate::finding::Rule;
use crate::rules::TABLE;

/// A rule code or a prefix of codes, checked against the rules table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selector(String);

impl Selector {
    /// `ALL`, `MJ`, or a prefix of at least one rule's code (`MJ1`, `MJ120`).
    pub(crate) fn parse(text: &str) -> Result<Selector, String> {
        let known = text == "ALL" || TABLE.iter().any(|r| r.code.starts_with(text));
        if known && (text == "ALL" || text.starts_with("MJ")) {
            Ok(Selector(text.to_string()))
        } else {
            Err(format!(
                "{text:?} is not a rule code or a prefix of one (MJ701, MJ7, MJ, or ALL; the \
                 codes are in docs/rules.md)"
            ))
        }
    }

    fn matches(&self, code: &str) -> bool {
        self.0 == "ALL" || code.starts_with(&self.0)
    }

    /// `ALL` first, then longer prefixes.
    fn specificity(&self) -> usize {
        if self.0 == "ALL" { 0 } else { self.0.len() }
    }
}

/// The rules a run reports, one flag per row of the rules table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSet {
    on: Vec<bool>,
}

impl Default for RuleSet {
    /// Every rule.
    fn default() -> Self {
        RuleSet {
            on: vec![true; TABLE.len()],
        }
    }
}

impl RuleSet {
    /// Whether findings of `rule` are reported.
    pub fn shows(&self, rule: Rule) -> bool {
        self.on.get(rule as usize).copied().unwrap_or(true)
    }

    /// Applies one layer: `select` (when given) replaces the set; `ignore` takes away.
    pub(crate) fn apply(&mut self, select: Option<&[Selector]>, ignore: &[Selector]) {
        let mut updates: Vec<Option<bool>> = vec![None; TABLE.len()];
        let most = (select.into_iter().flatten().chain(ignore))
            .map(Selector::specificity)
            .max()
            .unwrap_or(0);
        for spec in 0..=most {
            let at = |s: &&Selector| s.specificity() == spec;
            for (list, on) in [(select.unwrap_or(&[]), true), (ignore, false)] {
                for s in list.iter().filter(at) {
                    for (i, r) in TABLE.iter().enumerate() {
                        if s.matches(r.code) {
                            updates[i] = Some(on);
                        }
                    }
                }
            }
        }
        for (i, u) in updates.into_iter().enumerate() {
            self.on[i] = match (select.is_some(), u) {
                (_, Some(on)) => on,
                (true, None) => false,
                (false, None) => self.on[i],
            };
        }
    }

    /// The codes left out, in code order.
    pub(crate) fn ignored_codes(&self) -> Vec<String> {
        (TABLE.iter().zip(&self.on))
            .filter(|(_, on)| !**on)
            .map(|(r, _)| r.code.to_string())
            .collect()
    }
}

/// Parses a list of selectors; the error names the first that is not one.
pub(crate) fn parse_all(texts: &[String]) -> Result<Vec<Selector>, String> {
    texts.iter().map(|t| Selector::parse(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(list: &[&str]) -> Vec<Selector> {
        list.iter().map(|s| Selector::parse(s).unwrap()).collect()
    }

    #[test]
    fn layers_as_ruff_does() {
        let mut set = RuleSet::default();
        set.apply(None, &sel(&["MJ7", "MJ120"]));
        assert!(!set.shows(Rule::WouldChange) && !set.shows(Rule::StrategyChosen));
        assert!(set.shows(Rule::VersionsUnknown));
        // A more specific select wins over a broader ignore in the same layer.
        set.apply(Some(&sel(&["MJ1", "MJ701"])), &sel(&["MJ12"]));
        assert!(set.shows(Rule::WouldChange) && set.shows(Rule::NoPodTemplate));
        assert!(!set.shows(Rule::StrategyChosen) && !set.shows(Rule::UnknownEntrypoint));
        set.apply(Some(&sel(&["ALL"])), &[]);
        assert_eq!(set, RuleSet::default());
        assert!(Selector::parse("MJ9").is_err() && Selector::parse("mj1").is_err());
        assert!(Selector::parse("").is_err() && Selector::parse("M").is_err());
    }
}
